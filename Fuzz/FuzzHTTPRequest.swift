// libFuzzer entry point for the metrics endpoint's request parser (`HTTPRequest`), which reads
// bytes any local process can send to a root daemon. Built by Fuzz/run-http.sh with
// Sources/LaunchprofMonitor/HTTPRequest.swift. Besides crashes, a broken promise traps:
// - a request it accepts has a path starting with "/", printable, and header values without
//   control characters;
// - parsing is the same however the bytes arrive: any prefix of the input is either incomplete
//   or parses as the whole input does (what a connection's reads give the server);
// - the bearer check accepts exactly "Bearer " + the token and nothing else.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = HTTPRequest.parse(bytes)
    if case .request(let request) = whole {
        precondition(request.path.utf8.first == UInt8(ascii: "/"), "path \(request.path)")
        precondition(request.path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }, "path \(request.path)")
        for value in [request.accept, request.authorization].compactMap({ $0 }) {
            precondition(value.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7f) }, "value \(value)")
        }
        let end = HTTPRequest.headEnd(bytes)
        precondition(end != nil && end! <= HTTPRequest.maximumHeadBytes)
    }
    // Three cuts, as a connection's reads might deliver them.
    for cut in [1, size / 3, size - 1] where cut > 0 && cut < size {
        let prefix = Array(bytes[..<cut])
        let part = HTTPRequest.parse(prefix)
        precondition(part == .incomplete || part == whole, "a prefix of \(cut) bytes parses as \(part), the whole as \(whole)")
        // The search resumed where an earlier read stopped finds the same end.
        precondition(HTTPRequest.headEnd(bytes, from: cut) == HTTPRequest.headEnd(bytes) || HTTPRequest.headEnd(prefix) != nil)
    }
    // The input's first half as a token, its second as what a client sent.
    let token = Array(bytes.prefix(size / 2))
    let sent = String(decoding: bytes[(size / 2)...], as: UTF8.self)
    let expected = !token.isEmpty && sent.utf8.count == token.count + 7
        && sent.prefix(7).lowercased() == "bearer "
        && Array(sent.utf8.dropFirst(7)) == token
    precondition(HTTPRequest.bearer(sent, matches: token) == expected, "bearer \(sent.debugDescription) vs \(token)")
    if !token.isEmpty {
        let good = "Bearer " + String(decoding: token, as: UTF8.self)
        precondition(HTTPRequest.bearer(good, matches: Array(good.utf8.dropFirst(7))))
    }
    return 0
}
