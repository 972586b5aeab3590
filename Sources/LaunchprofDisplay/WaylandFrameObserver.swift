import CFrameWayland
import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// Watches a Wayland compositor for the first frame of a launched program: a relay (see
/// `CFrameWayland`) on a socket of launchprof's own, which the child reaches through its
/// `WAYLAND_DISPLAY` and which passes every byte and descriptor on to the real compositor,
/// reading the requests as they go by. One relay serves a whole session, on its own thread.
public final class WaylandFrameObserver: @unchecked Sendable {
    /// The compositor's socket name, as the child's `WAYLAND_DISPLAY` named it.
    public let display: String
    /// The relay's socket: the child's `WAYLAND_DISPLAY` (an absolute path).
    public let relayPath: String
    private let watch: DisplayWatch

    /// Checks that the compositor at `display` (relative to `runtimeDirectory`, or an absolute
    /// path) accepts connections, and starts relaying on a socket in a private directory.
    public init(display: String, runtimeDirectory: String?) throws(FrameObserverError) {
        self.display = display
        let compositor: String
        if display.hasPrefix("/") {
            compositor = display
        } else if let runtimeDirectory, !runtimeDirectory.isEmpty {
            compositor = runtimeDirectory + "/" + display
        } else {
            throw .noRuntimeDirectory(display: display)
        }
        guard Self.accepts(compositor) else { throw .cannotConnectWayland(display: display, path: compositor) }
        var template = Array("/tmp/launchprof-wayland-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw .system(operation: "mkdtemp", errno: errno) }
        let directory = String(cString: made)
        relayPath = directory + "/relay"
        var handle: OpaquePointer?
        let status = lp_wl_relay_open(relayPath, compositor, &handle)
        guard status == 0, let handle else {
            rmdir(directory)
            throw .system(operation: "listening on \(relayPath)", errno: status)
        }
        // Used by the watch's thread alone until the watch has stopped it.
        nonisolated(unsafe) let connection = handle
        watch = try DisplayWatch(disconnect: {
            lp_wl_relay_close(connection)
            rmdir(directory)
        }) { [display] wakeRead, launch in
            Self.serve(connection, wakeRead: wakeRead, display: display, launch: launch)
        }
    }

    /// A launch begins (call before its spawn); its clients' events go to `onEvent`.
    public func beginLaunch(
        launchedPid: @escaping @Sendable () -> Int32, onEvent: @escaping @Sendable (DisplayEvent) -> Void
    ) {
        watch.beginLaunch(launchedPid: launchedPid, onEvent: onEvent)
    }

    /// The launch is over: returns what was seen of its surfaces.
    @discardableResult
    public func endLaunch() -> [DisplayEvent] { watch.endLaunch() }

    /// Stops relaying (closing every client's connection) and removes the socket.
    public func stop() { watch.stop() }

    private static func accepts(_ path: String) -> Bool {
        guard case .success(let fd) = UnixSocket.connect(path) else { return false }
        close(fd)
        return true
    }

    /// The relay's thread: every client's bytes, the compositor's replies, the wake pipe.
    private static func serve(_ relay: OpaquePointer, wakeRead: Int32, display: String, launch: CurrentLaunch) {
        var generation = 0
        var relayLaunch: UInt32 = 0
        var buffer = [lp_wl_event](repeating: lp_wl_event(), count: 16)
        while true {
            // A new launch: clients that connect from now on are its own.
            let current = launch.state.withLock { $0.generation }
            if current != generation {
                generation = current
                lp_wl_relay_begin_launch(relay)
                relayLaunch &+= 1
            }
            let count = lp_wl_relay_step(relay, wakeRead, &buffer, Int32(buffer.count))
            if count < 0 {
                if DisplayWatch.stopRequested(wakeRead) { return }
                continue
            }
            for raw in buffer.prefix(Int(count)) where raw.launch == relayLaunch {
                launch.deliver(DisplayEvent(
                    kind: raw.kind == Int32(LP_WL_FIRST_FRAME.rawValue) ? .firstFrame : .windowMapped,
                    atNs: raw.at_ns, pid: raw.pid, window: "wl_surface@\(raw.surface)", display: display),
                    generation: generation)
            }
        }
    }
}
