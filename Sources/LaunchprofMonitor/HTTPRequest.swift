/// An HTTP/1.x request head as the metrics endpoint accepts it, parsed from bytes any local
/// process (or, bound elsewhere, any host) can send: strict, bounded, and with nothing kept but
/// the method, the path and the two headers the endpoint reads. Pure: Fuzz/run-http.sh fuzzes it.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The request target's path (no query string).
    public var path: String
    /// The `Accept` header (several are joined with ", ", as HTTP allows).
    public var accept: String?
    /// The `Authorization` header.
    public var authorization: String?

    /// The most a request head may take; more is refused.
    public static let maximumHeadBytes = 8192

    public enum Parse: Sendable, Equatable {
        /// The head is not complete yet.
        case incomplete
        case request(HTTPRequest)
        /// Not a request the endpoint answers: the status to answer with and why.
        case invalid(status: Int, reason: String)
    }

    /// Parses the head at the start of `bytes` (what a connection sent so far).
    public static func parse(_ bytes: [UInt8]) -> Parse {
        guard let end = headEnd(bytes) else {
            return bytes.count >= maximumHeadBytes ? .invalid(status: 431, reason: "request head too large") : .incomplete
        }
        guard end <= maximumHeadBytes else { return .invalid(status: 431, reason: "request head too large") }
        var lines = split(bytes[..<end])
        guard !lines.isEmpty else { return .invalid(status: 400, reason: "no request line") }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter) else {
            return .invalid(status: 400, reason: "malformed request line")
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .invalid(status: 505, reason: "HTTP version not supported")
        }
        let target = parts[1]
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            return .invalid(status: 400, reason: "malformed request target")
        }
        let pathBytes = target.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        var request = HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self), path: String(decoding: pathBytes, as: UTF8.self))
        var accepts: [String] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                return .invalid(status: 400, reason: "malformed header line")
            }
            let name = line[..<colon]
            // A name with white space, or a folded line (obsolete, and a smuggling vector), is refused.
            guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else {
                return .invalid(status: 400, reason: "malformed header name")
            }
            var value = line[(colon + 1)...]
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7f) }) else {
                return .invalid(status: 400, reason: "control character in a header value")
            }
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            let text = String(decoding: value, as: UTF8.self)
            switch String(decoding: name, as: UTF8.self).lowercased() {
            case "accept":
                accepts.append(text)
            case "authorization":
                guard request.authorization == nil else { return .invalid(status: 400, reason: "two Authorization headers") }
                request.authorization = text
            case "content-length":
                guard text == "0" else { return .invalid(status: 413, reason: "a request body is not accepted") }
            case "transfer-encoding":
                return .invalid(status: 413, reason: "a request body is not accepted")
            default:
                break
            }
        }
        request.accept = accepts.isEmpty ? nil : accepts.joined(separator: ", ")
        return .request(request)
    }

    /// Where the head ends (just past its blank line), if it does. `from`: the count of bytes
    /// already searched (a connection's earlier reads), so a client sending a byte at a time
    /// costs a scan of each byte once, not of its whole head per byte.
    public static func headEnd(_ bytes: [UInt8], from searched: Int = 0) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in max(3, searched)..<bytes.count
        where bytes[index] == 0x0a && bytes[index - 1] == 0x0d && bytes[index - 2] == 0x0a && bytes[index - 3] == 0x0d {
            return index + 1
        }
        return nil
    }

    /// Whether `authorization` is `Bearer TOKEN` (the scheme in any case) with exactly `token`.
    /// The time taken depends on the token's length alone, never on where a guess differs: every
    /// byte of the token is compared, without an early exit.
    public static func bearer(_ authorization: String?, matches token: [UInt8]) -> Bool {
        guard let authorization else { return false }
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        let lowered = bytes.prefix(scheme.count).map { $0 >= 0x41 && $0 <= 0x5a ? $0 + 0x20 : $0 }
        guard bytes.count > scheme.count, lowered == scheme else { return false }
        let given = bytes[scheme.count...]
        var difference = UInt8(given.count == token.count ? 0 : 1)
        for index in token.indices {
            let offset = given.startIndex + index
            difference |= token[index] ^ (offset < given.endIndex ? given[offset] : 0)
        }
        return difference == 0 && !token.isEmpty
    }

    /// The head's lines (CRLF-separated; a bare LF is taken as a line end too), the blank
    /// line left out.
    static func split(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        for index in head.indices where head[index] == 0x0a {
            var end = index
            if end > start, head[end - 1] == 0x0d { end -= 1 }
            lines.append(head[start..<end])
            start = index + 1
        }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        return lines
    }

    /// RFC 9110's `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
