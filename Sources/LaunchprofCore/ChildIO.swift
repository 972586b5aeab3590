import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// The child's standard streams for one run, as `--input`/`--output`/`--ready` ask: /dev/null,
/// a file, launchprof's own, or a pipe launchprof reads to match readiness lines.
final class ChildIO {
    private(set) var childInput: Int32 = -1
    private(set) var childOutput: Int32 = -1
    private(set) var childError: Int32 = -1
    /// Read ends launchprof watches (nil when the stream is not watched).
    private(set) var watchedOutput: Int32?
    private(set) var watchedError: Int32?
    /// Where watched output is passed on to (-1: dropped).
    private(set) var outputDestination: Int32 = -1
    private(set) var errorDestination: Int32 = -1
    private var owned: [Int32] = []
    private var childEnds: [Int32] = []
    /// The session's /dev/null, opened once (read, write), not owned.
    private let devNull: (read: Int32, write: Int32)?

    /// - Parameter devNull: /dev/null open for reading and for writing, kept by the session, so
    ///   a launch does not open and close it three times; nil: opened per launch.
    init(configuration: RunConfiguration, devNull: (read: Int32, write: Int32)? = nil) throws(RunError) {
        self.devNull = devNull
        switch configuration.input {
        case .null:
            if let devNull { childInput = devNull.read } else { childInput = try open("/dev/null", O_RDONLY) }
        case .file(let path): childInput = try open(path, O_RDONLY)
        }
        childEnds.append(childInput)
        let watchOutput = configuration.readiness.watchers.contains(.standardOutput)
        let watchError = configuration.readiness.watchers.contains(.standardError)
        var destination: Int32 = -1
        switch configuration.output {
        case .null: destination = -1
        case .inherit: destination = -2  // launchprof's own stream, per stream below
        case .file(let path): destination = try open(path, O_WRONLY | O_CREAT | O_APPEND, mode: 0o644)
        }
        (childOutput, watchedOutput, outputDestination) = try stream(
            watched: watchOutput, destination: destination, own: STDOUT_FILENO)
        (childError, watchedError, errorDestination) = try stream(
            watched: watchError, destination: destination, own: STDERR_FILENO)
    }

    /// One output stream: a pipe when watched, else the destination itself.
    private func stream(
        watched: Bool, destination: Int32, own: Int32
    ) throws(RunError) -> (child: Int32, watched: Int32?, passTo: Int32) {
        let passTo = destination == -2 ? own : destination
        if watched {
            var fds: [Int32] = [0, 0]
            let error = lp_pipe(&fds, false)
            guard error == 0 else { throw .system(operation: "pipe2", errno: error) }
            // launchprof's end only: the monitor drains it without ever blocking; the child's
            // end stays blocking, as a program expects of its stdout.
            _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
            owned += fds
            childEnds.append(fds[1])
            return (fds[1], fds[0], passTo)
        }
        if destination == -2 { return (-1, nil, -1) }  // inherit launchprof's stream
        if destination >= 0 { return (destination, nil, -1) }
        let null: Int32
        if let devNull { null = devNull.write } else { null = try open("/dev/null", O_WRONLY) }
        childEnds.append(null)
        return (null, nil, -1)
    }

    private func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(RunError) -> Int32 {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .system(operation: "open \(path)", errno: errno) }
        owned.append(fd)
        return fd
    }

    /// After the spawn: launchprof must not hold the pipes' write ends, or it never sees EOF.
    func closeChildEnds() {
        for fd in childEnds where owned.contains(fd) {
            Glibc.close(fd)
            owned.removeAll { $0 == fd }
        }
        childEnds.removeAll()
    }

    func close() {
        for fd in owned { Glibc.close(fd) }
        owned.removeAll()
    }
}
