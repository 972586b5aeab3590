import Foundation

/// Spawns a fixture with an exact environment and chosen descriptors, and waits for it with a
/// deadline (a hung child is killed and reported, not waited on forever).
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    enum Status: Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
    }

    /// Runs `path` with `environment` (nothing else inherited), `descriptors` mapped as
    /// child fd ← parent fd, stdio from /dev/null. Waits at most `timeout` seconds.
    static func run(
        _ path: String, arguments: [String] = [], environment: [String: String],
        descriptors: [Int32: Int32] = [:], timeout: Double = 20, spawned: ((pid_t) -> Void)? = nil
    ) throws -> Status {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        for (child, parent) in descriptors.sorted(by: { $0.key < $1.key }) {
            // dup2 onto itself would keep close-on-exec: go through a spare number first.
            if child == parent {
                posix_spawn_file_actions_adddup2(&actions, parent, 1000)
                posix_spawn_file_actions_adddup2(&actions, 1000, child)
                posix_spawn_file_actions_addclose(&actions, 1000)
            } else {
                posix_spawn_file_actions_adddup2(&actions, parent, child)
            }
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else {
            throw Failure(description: "posix_spawn \(path) failed: \(String(cString: strerror(result)))")
        }
        spawned?(pid)
        return wait(pid, timeout: timeout)
    }

    /// Waits on a helper thread, so the deadline needs no polling.
    static func wait(_ pid: pid_t, timeout: Double) -> Status {
        let done = DispatchSemaphore(value: 0)
        let box = StatusBox()
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            box.set(status)
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            kill(pid, SIGKILL)
            done.wait()
            return .timedOut
        }
        let status = box.get()
        if status & 0x7f == 0 { return .exited((status >> 8) & 0xff) }
        return .signaled(status & 0x7f)
    }

    private final class StatusBox: @unchecked Sendable {
        private let lock = NSLock()
        private var status: Int32 = 0
        func set(_ value: Int32) { lock.withLock { status = value } }
        func get() -> Int32 { lock.withLock { status } }
    }

    /// A hook channel like launchprof's (a Unix stream socketpair): (launchprof's end, the
    /// child's end), both close-on-exec.
    static func hookChannelPair() throws -> (reader: Int32, writer: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw Failure(description: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// Every line waiting on `fd`, without blocking, each without its newline.
    static func drain(_ fd: Int32) -> [[UInt8]] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return bytes.split(separator: UInt8(ascii: "\n")).map(Array.init)
    }
}
