import CLaunchprof
import Foundation

/// A real Wayland compositor for one test: weston's headless backend on a socket of its own in
/// a private 0700 `XDG_RUNTIME_DIR`, ready once the socket appears (inotify, no sleeping),
/// stopped by `stop()` (SIGTERM, waited for; the directory removed).
final class WestonServer {
    /// The socket's name, for `WAYLAND_DISPLAY`.
    let display: String
    /// The private runtime directory, for `XDG_RUNTIME_DIR`.
    let runtimeDirectory: String
    private var pid: pid_t = 0

    init() throws {
        var template = Array((NSTemporaryDirectory() + "lp-weston-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw DisplayServerProcess.StartError(description: "mkdtemp: errno \(errno)")
        }
        runtimeDirectory = String(cString: made)
        display = "lp-wayland-\(getpid())"
        let watch = inotify_init1(Int32(IN_CLOEXEC))
        guard watch >= 0, inotify_add_watch(watch, runtimeDirectory, UInt32(IN_CREATE)) >= 0 else {
            throw DisplayServerProcess.StartError(description: "inotify on \(runtimeDirectory): errno \(errno)")
        }
        defer { close(watch) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtimeDirectory
        environment.removeValue(forKey: "DISPLAY")
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        pid = try DisplayServerProcess.spawn(
            "/usr/bin/weston",
            ["--backend=headless-backend.so", "--socket=\(display)", "--idle-time=0"],
            package: "weston", environment: environment, waitForLine: false).0
        // The socket is created after its lock file; a name event for it means it is bound.
        let socketPath = runtimeDirectory + "/" + display
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard poll(&pending, 1, 10_000) > 0 else {
                stop()
                throw DisplayServerProcess.StartError(description: "weston did not create \(socketPath) within 10 s")
            }
            _ = read(watch, &buffer, buffer.count)
        }
    }

    /// Ends the compositor, waits for it and removes its runtime directory.
    func stop() {
        if pid > 0 {
            DisplayServerProcess.end(pid)
            pid = 0
        }
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
    }

    deinit { stop() }
}
