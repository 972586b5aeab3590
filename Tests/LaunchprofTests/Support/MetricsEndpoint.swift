import Foundation
import LaunchprofRenderers

#if canImport(Glibc)
    import Glibc
#endif

/// A scrape target for a real Prometheus: an HTTP server on 127.0.0.1 (a port the kernel picks)
/// that answers every GET with an exposition, in the format the request's `Accept` header asks
/// for (`ExpositionFormat.negotiated`) or always in one format, by path. It records each scrape
/// and signals each, so a test waits on scrapes, never on time.
final class MetricsEndpoint: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Scrape {
        var path: String
        var accept: String?
        var served: ExpositionFormat
    }

    let port: UInt16
    private let socket: Int32
    private let exposition: MetricsExposition
    /// Path → the format always served there; any other path is negotiated.
    private let fixed: [String: ExpositionFormat]
    private let lock = NSLock()
    private var scrapes: [Scrape] = []
    private let served = DispatchSemaphore(value: 0)
    private var thread: Thread?
    private var stopped = false

    init(_ exposition: MetricsExposition, fixed: [String: ExpositionFormat]) throws {
        self.exposition = exposition
        self.fixed = fixed
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard bound == 0, named == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        socket = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [unowned self] in self.serve() }
        self.thread = thread
        thread.start()
    }

    /// Waits until `path` has been scraped `count` times, at most `timeout` seconds.
    func waitForScrapes(of path: String, count: Int, timeout: Double) throws {
        let deadline = DispatchTime.now() + timeout
        while scrapesOf(path).count < count {
            guard served.wait(timeout: deadline) == .success else {
                throw Failure(description: "\(path) was scraped \(scrapesOf(path).count) of \(count) times in \(timeout) s")
            }
        }
    }

    func scrapesOf(_ path: String) -> [Scrape] {
        lock.lock()
        defer { lock.unlock() }
        return scrapes.filter { $0.path == path }
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    private func serve() {
        while true {
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else {
                lock.lock()
                let done = stopped
                lock.unlock()
                if done || errno != EINTR { return }
                continue
            }
            answer(connection)
            close(connection)
        }
    }

    private func answer(_ connection: Int32) {
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while request.count < 65_536 {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { break }
            request += buffer[0..<count]
            if request.count >= 4, Array(request.suffix(4)) == Array("\r\n\r\n".utf8) { break }
        }
        let lines = String(decoding: request, as: UTF8.self).components(separatedBy: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        let accept = lines.first { $0.lowercased().hasPrefix("accept:") }.map {
            String($0.dropFirst("accept:".count)).trimmingCharacters(in: .whitespaces)
        }
        let format = fixed[path] ?? ExpositionFormat.negotiated(accept: accept)
        let body = Array(exposition.text(format).utf8)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: \(format.contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let response = Array(head.utf8) + body
        var offset = 0
        while offset < response.count {
            let written = response[offset...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            guard written > 0 else { break }
            offset += written
        }
        lock.lock()
        scrapes.append(Scrape(path: path, accept: accept, served: format))
        lock.unlock()
        served.signal()
    }

    /// A GET to a server on 127.0.0.1 (Prometheus's API): the response's body.
    static func get(port: UInt16, _ target: String) throws -> Data {
        let client = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard client >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }
        let request = Array("GET \(target) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard write(client, request, request.count) == request.count else { throw Failure(description: "write: errno \(errno)") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no HTTP response from :\(port): \(text.prefix(200))") }
        return Data(text[split.upperBound...].utf8)
    }

    /// The TCP port a process listens on, found through its sockets' inodes in /proc/net/tcp
    /// (Prometheus picks its own with `--web.listen-address=127.0.0.1:0` and does not say which).
    static func listeningPort(of pid: pid_t) -> UInt16? {
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
        let inodes = Set(fds.compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                target.hasPrefix("socket:[")
            else { return nil }
            return String(target.dropFirst("socket:[".count).dropLast())
        })
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // local_address, …, st (0A: LISTEN), …, inode (the 10th field).
            guard fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])) else { continue }
            if let port = fields[1].split(separator: ":").last, let value = UInt16(port, radix: 16) { return value }
        }
        return nil
    }
}
