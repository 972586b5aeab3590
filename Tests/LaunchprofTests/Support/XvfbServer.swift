import CLaunchprof
import Foundation

/// A real X server for one test: Xvfb on a display number it picks itself (the first with no
/// `/tmp/.X11-unix/XN` and no `/tmp/.XN-lock`), ready once it writes that number to
/// `-displayfd` (no sleeping), stopped by `stop()` (SIGTERM, which lets it remove its socket and
/// lock file, then waited for).
///
/// `-noreset`: an X server resets (drops fonts, atoms, resources) whenever its last client
/// leaves, which between two launches would refuse connections for a moment.
final class XvfbServer {
    /// `:N`, for `$DISPLAY`.
    let display: String
    /// The server's process (a test names it as the waker of an app's waits).
    private(set) var pid: pid_t

    /// - Parameter disabling: extensions the server leaves out (`DAMAGE`, `X-Resource`).
    init(disabling: [String] = []) throws {
        let (pid, number) = try DisplayServerProcess.spawn(
            "/usr/bin/Xvfb",
            ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"]
                + disabling.flatMap { ["-extension", $0] },
            package: "xvfb")
        self.pid = pid
        guard let value = Int(number.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            DisplayServerProcess.end(pid)
            throw DisplayServerProcess.StartError(description: "Xvfb exited without naming its display (it wrote \"\(number)\")")
        }
        display = ":\(value)"
    }

    private var windowManagerPid: pid_t = 0

    /// Starts a reparenting window manager (openbox) on this display, returning once it manages
    /// windows: openbox runs its `--startup` command only then, and that command's line is what
    /// is waited for. A managed top-level window is reparented into openbox's frame, so the root
    /// sees only the frame's map.
    func startWindowManager() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        let (pid, _) = try DisplayServerProcess.spawn(
            "/usr/bin/openbox", ["--sm-disable", "--startup", "echo openbox-ready"], package: "openbox",
            environment: environment, readyLine: "openbox-ready")
        windowManagerPid = pid
    }

    /// Ends the window manager and the server and waits for them.
    func stop() {
        if windowManagerPid > 0 {
            DisplayServerProcess.end(windowManagerPid)
            windowManagerPid = 0
        }
        guard pid > 0 else { return }
        DisplayServerProcess.end(pid)
        pid = 0
    }

    deinit { stop() }
}

/// Spawning and ending the tests' display servers.
enum DisplayServerProcess {
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `path` with a clean signal mask (test threads block signals, and a server that
    /// inherited a blocked SIGTERM would never end), its stdout a pipe; returns its pid and the
    /// first line it writes there (when `waitForLine`), or, given `readyLine`, waits for that line
    /// among the others it writes.
    static func spawn(
        _ path: String, _ arguments: [String], package: String, environment: [String: String]? = nil,
        waitForLine: Bool = true, readyLine: String? = nil
    ) throws -> (pid_t, String) {
        var fds: [Int32] = [0, 0]
        let error = lp_pipe(&fds, false)
        guard error == 0 else { throw StartError(description: "pipe2: errno \(error)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if waitForLine {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { variables.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, variables)
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            throw StartError(description: "cannot start \(path) (Debian package \(package)): \(String(cString: strerror(status)))")
        }
        guard waitForLine else {
            close(fds[0])
            return (pid, "")
        }
        // Blocks until the server writes its line or exits (end of file).
        defer { close(fds[0]) }
        while true {
            var line = [UInt8]()
            var byte: UInt8 = 0
            var ended = true
            while read(fds[0], &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") { ended = false; break }
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let readyLine else { return (pid, text) }
            if text == readyLine { return (pid, text) }
            if ended {
                end(pid)
                throw StartError(description: "\(path) exited before writing \"\(readyLine)\"")
            }
        }
    }

    /// SIGTERM, then waits for the process.
    static func end(_ pid: pid_t) {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}
