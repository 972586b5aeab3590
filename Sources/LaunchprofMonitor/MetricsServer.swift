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
/// (`HTTPRequest`), no body, one request per connection, at most `maximumClients` at once, each
/// given `deadlineNs` to send its request and take the answer. A scrape must carry the bearer
/// token (`Authorization: Bearer …`, Prometheus's `authorization.credentials_file`): the counts
/// say which programs run on the machine. The answer is OpenMetrics or the classic text format,
/// as the `Accept` header asks.
public final class MetricsServer: @unchecked Sendable {
    public static let maximumClients = 32
    public static let deadlineNs: UInt64 = 5_000_000_000

    /// The address it listens on (the port chosen by the kernel when 0 was asked).
    public let address: String
    private let listener: Int32
    private let wakePipe: (read: Int32, write: Int32)
    private let token: [UInt8]
    private let metrics: FieldMetrics
    private var thread: DedicatedThread<Int>?

    private struct Client {
        var fd: Int32
        var received: [UInt8] = []
        var reply: [UInt8] = []
        var sent = 0
        var deadlineNs: UInt64
    }

    /// Binds `listen` ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464") and starts serving.
    public init(listen: String, token: [UInt8], metrics: FieldMetrics) throws(MonitorError) {
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
        self.token = token
        self.metrics = metrics
        address = Self.boundAddress(fd, family: endpoint.family) ?? listen
        let listener = fd
        let wake = pipe[0]
        let token = token
        thread = DedicatedThread { Self.serve(listener: listener, wake: wake, token: token, metrics: metrics) }
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

    private static func serve(listener: Int32, wake: Int32, token: [UInt8], metrics: FieldMetrics) -> Int {
        var clients: [Client] = []
        while true {
            var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if clients.count < maximumClients { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            for client in clients {
                descriptors.append(pollfd(fd: client.fd, events: Int16(client.reply.isEmpty ? POLLIN : POLLOUT), revents: 0))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeoutMs(clients))
            if ready < 0 && errno != EINTR { return 1 }
            if descriptors[0].revents != 0 { break }
            if descriptors.count > 1, descriptors[1].fd == listener, descriptors[1].revents != 0 {
                while clients.count < maximumClients {
                    let fd = accept(listener, nil, nil)
                    guard fd >= 0 else { break }
                    // Close-on-exec and non-blocking, as the listener (accept4 is not in Glibc's module).
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(fd, F_SETFL, O_NONBLOCK)
                    clients.append(Client(fd: fd, deadlineNs: lp_now_ns() + deadlineNs))
                }
            }
            let polled = Dictionary(descriptors.map { ($0.fd, $0.revents) }, uniquingKeysWith: { a, _ in a })
            var kept: [Client] = []
            for var client in clients {
                let events = polled[client.fd] ?? 0
                var done = lp_now_ns() >= client.deadlineNs
                if !done, events != 0 {
                    done = client.reply.isEmpty ? receive(&client, token: token, metrics: metrics) : send(&client)
                }
                if done { close(client.fd) } else { kept.append(client) }
            }
            clients = kept
        }
        for client in clients { close(client.fd) }
        return 0
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
        guard authorized(request.authorization, token: token) else {
            return response(
                status: 401, body: "a bearer token is required (the file the monitor names at start)\n",
                contentType: "text/plain; charset=utf-8", extra: ["WWW-Authenticate: Bearer realm=\"launchprof\""])
        }
        let format = ExpositionFormat.negotiated(accept: request.accept)
        let body = metrics.exposition().text(format)
        return response(status: 200, body: body, contentType: format.contentType, headOnly: request.method == "HEAD")
    }

    /// Whether `Authorization: Bearer TOKEN` names the token, compared in constant time.
    static func authorized(_ header: String?, token: [UInt8]) -> Bool {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return false }
        let given = Array(header.utf8.dropFirst(7))
        var difference = UInt8(given.count == token.count ? 0 : 1)
        for index in 0..<token.count { difference |= token[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
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
