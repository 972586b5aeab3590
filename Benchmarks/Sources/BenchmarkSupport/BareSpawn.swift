#if canImport(Glibc)
import Glibc
#endif

/// posix_spawn + waitpid with an explicit environment: the baseline every profiled launch is
/// compared with, and the way benchmarks run their helper programs.
public struct BareSpawn {
    public var path: String
    public var arguments: [String]
    public var environment: [String]
    /// Descriptor the child gets as its stdout; /dev/null when nil.
    public var standardOutput: Int32?
    /// A descriptor passed to the child under another number: (ours, theirs).
    public var passing: (descriptor: Int32, as: Int32)?

    public init(path: String, arguments: [String], environment: [String] = ChildEnvironment.strings()) {
        self.path = path
        self.arguments = arguments
        self.environment = environment
    }

    /// Spawns the child and waits for it; returns its wait status.
    public func run() throws(BenchmarkError) -> Int32 {
        let pid = try spawn()
        return try Self.wait(pid, path: path)
    }

    /// Runs the child and returns what it printed on stdout; a non-zero exit is an error.
    public func output() throws(BenchmarkError) -> String {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .systemCall(name: "pipe", errno: errno) }
        // Close-on-exec, so only the child's dup2'd stdout keeps the write end open.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        var spawn = self
        spawn.standardOutput = ends[1]
        let pid: pid_t
        do {
            pid = try spawn.spawn()
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count > 0 { bytes += buffer[0..<count] } else if count == 0 || errno != EINTR { break }
        }
        close(ends[0])
        let status = try Self.wait(pid, path: path)
        guard status == 0 else { throw .childFailed(path: path, status: status) }
        return String(decoding: bytes, as: UTF8.self)
    }

    public func spawn() throws(BenchmarkError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let standardOutput {
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if let passing {
            posix_spawn_file_actions_adddup2(&actions, passing.descriptor, passing.as)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let error = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard error == 0 else { throw .spawnFailed(path: path, errno: error) }
        return pid
    }

    public static func wait(_ pid: pid_t, path: String) throws(BenchmarkError) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw .systemCall(name: "waitpid(\(path))", errno: errno) }
        }
        return status
    }
}
