import CLaunchprof
import Foundation
import LaunchprofMonitor
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The monitor's `/metrics` endpoint as an attacker on the machine meets it: a root daemon's
/// socket that any local user can reach. The parser on hostile heads, the bearer check, and the
/// server itself in this process over real sockets: refusals with their status, slow and idle
/// clients cut off, a scraper never locked out.
@Suite("The metrics endpoint under hostile input")
struct MetricsEndpointHostileTests {
    static let token = Array("0123456789abcdef0123456789abcdef".utf8)
    static let scrape = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer 0123456789abcdef0123456789abcdef\r\n\r\n"

    // MARK: The parser

    @Test("hostile heads are refused with the status that says why", arguments: [
        ("\r\n\r\n", 400),
        ("GET /metrics\r\n\r\n", 400),
        ("GET  /metrics HTTP/1.1\r\n\r\n", 400),
        ("GET /metrics HTTP/2.0\r\n\r\n", 505),
        ("GET metrics HTTP/1.1\r\n\r\n", 400),
        ("GET http://host/metrics HTTP/1.1\r\n\r\n", 400),
        ("GET /met\u{0}rics HTTP/1.1\r\n\r\n", 400),
        ("G\u{0}T /metrics HTTP/1.1\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nAuthorization: Bearer abc\u{0}def\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nAuthorization: Bearer abc\rdef\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nX-A: b\u{7f}\r\n\r\n", 400),
        // Folded (obsolete line folding): a continuation line starts with white space.
        ("GET /metrics HTTP/1.1\r\nAuthorization: Bearer\r\n 0123456789abcdef\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nX-A: b\r\n\tAuthorization: Bearer x\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nAuthorization : Bearer x\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nauthorization: Bearer a\r\nAUTHORIZATION: Bearer a\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 413),
        ("GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 413),
        ("GET /metrics HTTP/1.1\r\nX-Pad: " + String(repeating: "a", count: 9000) + "\r\n\r\n", 431),
        ("GET /metrics HTTP/1.1\r\nX-Pad: " + String(repeating: "a", count: 9000), 431),
    ])
    func hostileHeads(head: String, status: Int) {
        guard case .invalid(let refused, let reason) = HTTPRequest.parse(Array(head.utf8)) else {
            Issue.record("accepted: \(head.prefix(80).debugDescription)")
            return
        }
        #expect(refused == status, "\(head.prefix(80).debugDescription): \(refused) \(reason)")
    }

    @Test("a request arrives in any pieces: incomplete until its blank line, then the same request")
    func incremental() throws {
        let head = Array("GET /metrics?x=1 HTTP/1.1\r\nAccept: text/plain\r\naccept: */*\r\nAuthorization: bearer  t\r\n\r\n".utf8)
        guard case .request(let request) = HTTPRequest.parse(head) else { throw Failure("the request was refused") }
        #expect(request.method == "GET" && request.path == "/metrics")
        #expect(request.accept == "text/plain, */*" && request.authorization == "bearer  t")
        for cut in 0..<head.count {
            #expect(HTTPRequest.parse(Array(head[..<cut])) == .incomplete, "\(cut) bytes")
            // The server's search resumes where its last read ended.
            #expect(HTTPRequest.headEnd(head, from: cut) == head.count, "search from \(cut)")
        }
    }

    @Test("the bearer token: exactly Bearer and the token, every byte compared")
    func bearer() {
        let token = Self.token
        let text = String(decoding: token, as: UTF8.self)
        #expect(HTTPRequest.bearer("Bearer " + text, matches: token))
        #expect(HTTPRequest.bearer("bEaReR " + text, matches: token))
        for refused in [
            nil, "", "Bearer", "Bearer ", "Bearer  " + text, "Basic " + text, text, "Bearer " + text + "0",
            "Bearer " + String(text.dropLast()), "Bearer " + text.uppercased(), "Bearer\t" + text, "Bearer\u{0}" + text,
        ] {
            #expect(!HTTPRequest.bearer(refused, matches: token), "\(refused.debugDescription)")
        }
        // A guess wrong in any one byte, the first as the last, is refused.
        for index in token.indices {
            var guess = token
            guess[index] ^= 0x01
            #expect(!HTTPRequest.bearer("Bearer " + String(decoding: guess, as: UTF8.self), matches: token), "byte \(index)")
        }
        #expect(!HTTPRequest.bearer("Bearer x", matches: []), "an empty token matches nothing")
    }

    // MARK: The server

    @Test("over a socket: refusals with their status, the scrape answered with an exposition the Prometheus parser reads")
    func answers() throws {
        let server = try MetricsServer(listen: "127.0.0.1:0", token: Self.token, metrics: FieldMetrics(programs: ["/usr/bin/app"]))
        defer { server.stop() }
        let wrong = Self.scrape.replacingOccurrences(of: "cdef\r\n", with: "cdeF\r\n")
        let cases: [(String, String)] = [
            ("GET /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 401 "),
            (wrong, "HTTP/1.1 401 "),
            (Self.scrape.replacingOccurrences(of: "/metrics", with: "/"), "HTTP/1.1 404 "),
            (Self.scrape.replacingOccurrences(of: "GET", with: "POST"), "HTTP/1.1 405 "),
            ("GET /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "HTTP/1.1 413 "),
            ("GET /metrics HTTP/1.1\r\nX: \u{0}\r\n\r\n", "HTTP/1.1 400 "),
            (Self.scrape + String(repeating: "x", count: 100), "HTTP/1.1 200 "),
            (String(repeating: "GET /metrics HTTP/1.1\r\nX-A: b\r\n", count: 400), "HTTP/1.1 431 "),
            ("GET /metrics HTTP/2.0\r\n\r\n", "HTTP/1.1 505 "),
        ]
        for (request, status) in cases {
            let client = try Client(server.address)
            client.send(Array(request.utf8))
            let answer = try client.readToEnd(timeout: 10)
            #expect(answer.hasPrefix(status), "\(request.prefix(60).debugDescription) → \(answer.prefix(80).debugDescription)")
            if status.contains("401") { #expect(answer.contains("WWW-Authenticate: Bearer")) }
        }
        let client = try Client(server.address)
        client.send(Array(Self.scrape.replacingOccurrences(of: "Host:", with: "Accept: application/openmetrics-text;version=1.0.0\r\nHost:").utf8))
        let answer = try client.readToEnd(timeout: 10)
        let body = try #require(answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) })
        let samples = try OpenMetricsParser.parse(body)
        #expect(samples.contains { $0["family"] as? String == "launchprof_field_time_to_first_frame_seconds" }, "\(body)")
    }

    @Test("a client sending a byte at a time is cut off at its deadline, and does not hold a scrape back")
    func slowloris() throws {
        let deadline = 2.0
        let server = try MetricsServer(
            listen: "127.0.0.1:0", token: Self.token, metrics: FieldMetrics(programs: []),
            limits: .init(clients: 4, deadlineNs: UInt64(deadline * 1e9)))
        defer { server.stop() }
        let slow = try Client(server.address)
        let connected = lp_now_ns()
        let head = Array(Self.scrape.utf8)
        slow.send([head[0]])
        // Meanwhile a scrape is answered at once.
        let scraper = try Client(server.address)
        scraper.send(head)
        #expect(try scraper.readToEnd(timeout: 10).hasPrefix("HTTP/1.1 200 "))
        #expect(Double(lp_now_ns() - connected) / 1e9 < deadline, "the scrape waited for the slow client")
        // The slow client goes on, a byte each time the server has said nothing for 50 ms.
        var sent = 1
        var closedNs: UInt64?
        while closedNs == nil, sent < head.count - 1, lp_now_ns() - connected < 20_000_000_000 {
            if slow.waitReadable(milliseconds: 50) {
                #expect(slow.read().isEmpty, "the slow client was answered")
                closedNs = lp_now_ns()
            } else {
                slow.send([head[sent]])
                sent += 1
            }
        }
        let closed = try #require(closedNs, "still open after \(sent) bytes")
        let lived = Double(closed - connected) / 1e9
        #expect(lived >= deadline - 0.01 && lived < deadline + 2, "closed after \(lived) s (deadline \(deadline) s)")
    }

    @Test("idle connections at the limit: a scraper still gets in, the oldest idle one gives way")
    func boundedConnections() throws {
        let server = try MetricsServer(
            listen: "127.0.0.1:0", token: Self.token, metrics: FieldMetrics(programs: []),
            limits: .init(clients: 4, deadlineNs: 60_000_000_000))
        defer { server.stop() }
        // Accepted in the order they connect (the listen queue is first in, first out).
        var idle: [Client] = []
        for _ in 0..<4 {
            let client = try Client(server.address)
            client.send(Array("GET /metr".utf8))
            idle.append(client)
        }
        let scraper = try Client(server.address)
        scraper.send(Array(Self.scrape.utf8))
        #expect(try scraper.readToEnd(timeout: 10).hasPrefix("HTTP/1.1 200 "), "the scraper was locked out")
        // The first idle connection was closed for it, long before its deadline; the others stay.
        #expect(idle[0].waitReadable(milliseconds: 5000) && idle[0].read().isEmpty)
        for client in idle.dropFirst() { #expect(!client.waitReadable(milliseconds: 0)) }
    }

    // MARK: Helpers

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// A blocking TCP client of 127.0.0.1.
    final class Client {
        let fd: Int32

        init(_ address: String) throws {
            guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
                throw Failure("address \(address)")
            }
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = port.bigEndian
            target.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, connected == 0 else { throw Failure("connect: errno \(errno)") }
        }

        deinit { close(fd) }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Whether the server sent something or closed within `milliseconds`.
        func waitReadable(milliseconds: Int32) -> Bool {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, milliseconds) > 0
        }

        /// What one read gives (empty at the end, or when the server reset the connection).
        func read() -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? Array(buffer[..<count]) : []
        }

        /// Everything until the server closes.
        func readToEnd(timeout: Int32) throws -> String {
            var all: [UInt8] = []
            while true {
                guard waitReadable(milliseconds: timeout * 1000) else { throw Failure("no answer in \(timeout) s") }
                let chunk = read()
                if chunk.isEmpty { return String(decoding: all, as: UTF8.self) }
                all += chunk
            }
        }
    }
}
