import BenchmarkSupport

#if canImport(Glibc)
import Glibc
#endif

/// Drains launchprof's end of the hook channel (a Unix stream socketpair, as launchprof makes it)
/// on its own thread and counts the lines, until every writer has closed its end.
final class HookDrain: @unchecked Sendable {
    let ours: Int32
    let theirs: Int32
    private var thread = pthread_t()
    private(set) var lines = 0

    init() throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw BenchmarkError.systemCall(name: "socketpair", errno: errno)
        }
        ours = pair[0]
        theirs = pair[1]
        let context = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&thread, nil, { context in
            let drain = Unmanaged<HookDrain>.fromOpaque(context!).takeRetainedValue()
            drain.loop()
            return nil
        }, context) == 0 else {
            Unmanaged<HookDrain>.fromOpaque(context).release()
            close(ours)
            close(theirs)
            throw BenchmarkError.systemCall(name: "pthread_create", errno: errno)
        }
    }

    private func loop() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(ours, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }  // end of stream: every writer closed its end
            lines += buffer[0..<count].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }
    }

    /// Call once the child has exited: closes our copy of its end, waits for the reader to see
    /// the end of the stream, and returns the lines received.
    func finish() -> Int {
        close(theirs)
        pthread_join(thread, nil)
        close(ours)
        return lines
    }
}
