import CLaunchprof
import LaunchprofRenderers
import LaunchprofSystem
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `--metrics-listen ADDRESS:PORT`: Prometheus's `/metrics` over HTTP/1.1, on a thread of its
/// own. Everything a client sends is hostile input: a head of at most 8 KiB parsed strictly
/// (`HTTPRequest`), no body, one request per connection. A client cannot hold the server: each
/// connection has `Limits.deadlineNs` for its whole life (a client trickling its request a byte
/// at a time is cut off then), at most `Limits.clients` are open, and a new connection beyond
/// that closes the oldest one still sending its request (so a crowd of idle connections cannot
/// lock a scraper out). A scrape must carry the bearer token (`Authorization: Bearer …`,
/// Prometheus's `authorization.credentials_file`): the counts say which programs run on the
/// machine. The answer is OpenMetrics or the classic text format, as the `Accept` header asks.
public final class MetricsServer: @unchecked Sendable {
    public struct Limits: Sendable {
        /// Connections open at once.
        public var clients: Int
        /// A connection's whole life: its request and the sending of the answer.
        public var deadlineNs: UInt64

        public init(clients: Int = 32, deadlineNs: UInt64 = 5_000_000_000) {
            self.clients = max(clients, 1)
            self.deadlineNs = deadlineNs
        }
    }

    /// The address it listens on (the port chosen by the kernel when 0 was asked).
    public let address: String
    private let listener: Int32
    private let wakePipe: (read: Int32, write: Int32)
    private var thread: DedicatedThread<Int>?

    private struct Client {
        var fd: Int32
        var received: [UInt8] = []
        /// How much of `received` was searched for the head's end.
        var searched = 0
        var reply: [UInt8] = []
        var sent = 0
        var deadlineNs: UInt64
    }

    /// Binds `listen` ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464") and starts serving.
    public init(listen: String, token: [UInt8], metrics: FieldMetrics, limits: Limits = Limits()) throws(MonitorError) {
        guard let endpoint = Self.parseAddress(listen) else {
            throw .badValue(
                option: "--metrics-listen", value: listen,
                reason: "give an IP address and a port, like 127.0.0.1:9464 or [::1]:9464 (no host names)")
        }
        let fd = socket(endpoint.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .cannotListen(address: listen, errno: errno) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = endpoint.bytes.withUnsafeBytes { bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count)) }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let error = errno
            close(fd)
            throw .cannotListen(address: listen, errno: error)
        }
        var pipe: [Int32] = [0, 0]
        guard lp_pipe(&pipe, true) == 0 else {
            close(fd)
            throw .cannotListen(address: listen, errno: errno)
        }
        listener = fd
        wakePipe = (pipe[0], pipe[1])
        address = Self.boundAddress(fd, family: endpoint.family) ?? listen
        let listener = fd
        let wake = pipe[0]
        thread = DedicatedThread { Self.serve(listener: listener, wake: wake, token: token, metrics: metrics, limits: limits) }
    }

    /// Stops serving and closes every connection.
    public func stop() {
        guard let thread else { return }
        var byte: UInt8 = 0
        _ = write(wakePipe.write, &byte, 1)
        _ = thread.join()
        self.thread = nil
        close(listener)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    deinit { stop() }

    // MARK: Serving

    private static func serve(listener: Int32, wake: Int32, token: [UInt8], metrics: FieldMetrics, limits: Limits) -> Int {
        var clients: [Client] = []
        // Out of descriptors or memory, accept fails while the listener stays readable: it is
        // left alone (a negative descriptor is skipped by poll) for a tenth of a second.
        var restUntilNs: UInt64 = 0
        while true {
            let resting = lp_now_ns() < restUntilNs
            var descriptors = [
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
                pollfd(fd: resting ? -1 : listener, events: Int16(POLLIN), revents: 0),
            ]
            for client in clients {
                descriptors.append(pollfd(fd: client.fd, events: Int16(client.reply.isEmpty ? POLLIN : POLLOUT), revents: 0))
            }
            let timeout = timeoutMs(clients)
            let ready = poll(&descriptors, nfds_t(descriptors.count), resting && (timeout < 0 || timeout > 100) ? 100 : timeout)
            if ready < 0 && errno != EINTR { return 1 }
            if descriptors[0].revents != 0 { break }
            let now = lp_now_ns()
            var kept: [Client] = []
            for (index, var client) in clients.enumerated() {
                let events = descriptors[index + 2].revents
                var done = now >= client.deadlineNs
                if !done, events != 0 {
                    done = client.reply.isEmpty ? receive(&client, token: token, metrics: metrics) : send(&client)
                }
                if done { close(client.fd) } else { kept.append(client) }
            }
            clients = kept
            if descriptors[1].revents != 0, !admit(listener, into: &clients, limits: limits, now: now) {
                restUntilNs = now + 100_000_000
            }
        }
        for client in clients { close(client.fd) }
        return 0
    }

    /// Accepts the connections waiting (a bounded number per pass). At the limit, a newcomer
    /// takes the place of the oldest connection still sending its request; when every one is
    /// being answered, the newcomer is closed. False when accept failed for want of resources.
    private static func admit(_ listener: Int32, into clients: inout [Client], limits: Limits, now: UInt64) -> Bool {
        for _ in 0..<64 {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return [EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED].contains(errno) }
            // Close-on-exec and non-blocking, as the listener (accept4 is not in Glibc's module).
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            if clients.count >= limits.clients {
                let waiting = clients.indices.filter { clients[$0].reply.isEmpty }
                guard let oldest = waiting.min(by: { clients[$0].deadlineNs < clients[$1].deadlineNs }) else {
                    close(fd)
                    continue
                }
                close(clients[oldest].fd)
                clients.remove(at: oldest)
            }
            clients.append(Client(fd: fd, deadlineNs: now + limits.deadlineNs))
        }
        return true
    }

    /// How long a poll may wait: until the nearest client's deadline, else forever.
    private static func timeoutMs(_ clients: [Client]) -> Int32 {
        guard let nearest = clients.map(\.deadlineNs).min() else { return -1 }
        let now = lp_now_ns()
        guard nearest > now else { return 0 }
        return Int32(min((nearest - now) / 1_000_000 + 1, 60_000))
    }

    /// Reads what a client sent; when its head is complete, prepares the answer. True when the
    /// connection is over.
    private static func receive(_ client: inout Client, token: [UInt8], metrics: FieldMetrics) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { return errno != EAGAIN && errno != EINTR }
        if count == 0 { return true }
        client.received += chunk[..<count]
        // The head is parsed once it is complete (or too large): a client sending a byte at a
        // time costs one look at each byte.
        if client.received.count < HTTPRequest.maximumHeadBytes,
            HTTPRequest.headEnd(client.received, from: client.searched) == nil
        {
            client.searched = client.received.count
            return false
        }
        switch HTTPRequest.parse(client.received) {
        case .incomplete:
            return false
        case .invalid(let status, let reason):
            client.reply = response(status: status, body: reason + "\n", contentType: "text/plain; charset=utf-8")
        case .request(let request):
            client.reply = answer(request, token: token, metrics: metrics)
        }
        return send(&client)
    }

    /// Writes what it can of the answer; true once it is all sent (or the peer is gone).
    private static func send(_ client: inout Client) -> Bool {
        let count = client.reply[client.sent...].withUnsafeBytes {
            Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if count < 0 { return errno != EAGAIN && errno != EINTR }
        client.sent += count
        return client.sent >= client.reply.count
    }

    /// The answer to a well-formed request.
    static func answer(_ request: HTTPRequest, token: [UInt8], metrics: FieldMetrics) -> [UInt8] {
        guard request.path == "/metrics" else {
            return response(status: 404, body: "not found: the metrics are at /metrics\n", contentType: "text/plain; charset=utf-8")
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return response(status: 405, body: "method not allowed\n", contentType: "text/plain; charset=utf-8", extra: ["Allow: GET, HEAD"])
        }
        guard HTTPRequest.bearer(request.authorization, matches: token) else {
            return response(
                status: 401, body: "a bearer token is required (the file the monitor names at start)\n",
                contentType: "text/plain; charset=utf-8", extra: ["WWW-Authenticate: Bearer realm=\"launchprof\""])
        }
        let format = ExpositionFormat.negotiated(accept: request.accept)
        let body = metrics.exposition().text(format)
        return response(status: 200, body: body, contentType: format.contentType, headOnly: request.method == "HEAD")
    }

    static func response(status: Int, body: String, contentType: String, extra: [String] = [], headOnly: Bool = false) -> [UInt8] {
        let reasons = [
            200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            413: "Content Too Large", 431: "Request Header Fields Too Large", 505: "HTTP Version Not Supported",
        ]
        let bodyBytes = Array(body.utf8)
        var head = "HTTP/1.1 \(status) \(reasons[status] ?? "Error")\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(bodyBytes.count)\r\nConnection: close\r\n"
        head += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
        for line in extra { head += line + "\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (headOnly ? [] : bodyBytes)
    }

    // MARK: Addresses

    struct Endpoint {
        var family: Int32
        var bytes: [UInt8]
    }

    /// `A.B.C.D:PORT` or `[IPv6]:PORT` as a socket address; nil for anything else.
    static func parseAddress(_ text: String) -> Endpoint? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
            text[text.index(after: colon)...].allSatisfy(\.isNumber)
        else { return nil }
        var host = String(text[..<colon])
        let portBytes = [UInt8(port >> 8), UInt8(port & 0xff)]
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            var address = in6_addr()
            guard inet_pton(AF_INET6, host, &address) == 1 else { return nil }
            let raw = withUnsafeBytes(of: &address) { Array($0) }
            // sockaddr_in6: family, port, flowinfo, address, scope id.
            return Endpoint(family: AF_INET6, bytes: [UInt8(AF_INET6), 0] + portBytes + [0, 0, 0, 0] + raw + [0, 0, 0, 0])
        }
        var address = in_addr()
        guard !host.contains(":"), inet_pton(AF_INET, host, &address) == 1 else { return nil }
        let raw = withUnsafeBytes(of: &address) { Array($0) }
        return Endpoint(family: AF_INET, bytes: [UInt8(AF_INET), 0] + portBytes + raw + Array(repeating: 0, count: 8))
    }

    /// "127.0.0.1:PORT" or "[::1]:PORT" of a bound socket.
    static func boundAddress(_ fd: Int32, family: Int32) -> String? {
        var storage = [UInt8](repeating: 0, count: 128)
        var length = socklen_t(storage.count)
        let status = storage.withUnsafeMutableBytes { getsockname(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length) }
        guard status == 0 else { return nil }
        let port = Int(storage[2]) << 8 | Int(storage[3])
        var text = [CChar](repeating: 0, count: 64)
        if family == AF_INET6 {
            let address = Array(storage[8..<24])
            guard address.withUnsafeBytes({ inet_ntop(AF_INET6, $0.baseAddress, &text, socklen_t(text.count)) }) != nil else { return nil }
            return "[\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))]:\(port)"
        }
        let address = Array(storage[4..<8])
        guard address.withUnsafeBytes({ inet_ntop(AF_INET, $0.baseAddress, &text, socklen_t(text.count)) }) != nil else { return nil }
        return "\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)):\(port)"
    }

    /// Whether an address given to `--metrics-listen` is a loopback one.
    public static func isLoopback(_ text: String) -> Bool {
        text.hasPrefix("127.") || text.hasPrefix("[::1]:")
    }
}
