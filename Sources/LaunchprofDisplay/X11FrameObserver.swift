import CFrameX11
import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// Watches an X display, from the server's side, for the first window of a launched program and
/// its first content: a client of launchprof's own (see `CFrameX11`), on its own thread, woken
/// only by the server's events.
///
/// One connection serves a whole session: an X server resets (drops its fonts, atoms and
/// resources) when its last client leaves, and a connection per launch could make every launch
/// meet a freshly reset server. Each launch calls `beginLaunch` before its spawn (so none of its
/// windows can appear unseen) and `endLaunch` after.
public final class X11FrameObserver: @unchecked Sendable {
    /// The display it watches, as `$DISPLAY` names it.
    public let display: String
    /// Whether the server names window owners (X-Resource 1.2); else `_NET_WM_PID` does, which
    /// toolkits set but raw Xlib/xcb programs may not.
    public let ownersFromXResource: Bool
    private let watch: DisplayWatch

    /// Connects to `display` and starts watching its roots for new windows.
    public init(display: String) throws(FrameObserverError) {
        self.display = display
        var handle: OpaquePointer?
        var hasXRes: Int32 = 0
        let status = lp_x11_open(display, &handle, &hasXRes)
        switch Int(status) {
        case Int(LP_X11_OK.rawValue): break
        case Int(LP_X11_NO_DAMAGE.rawValue): throw .missingExtension(display: display, name: "DAMAGE")
        case Int(LP_X11_SELECT_FAILED.rawValue): throw .cannotSelect(display: display)
        default: throw .cannotConnect(display: display)
        }
        guard let handle else { throw .cannotConnect(display: display) }
        ownersFromXResource = hasXRes != 0
        // Used by the watch's thread alone until the watch has stopped it.
        nonisolated(unsafe) let connection = handle
        watch = try DisplayWatch(disconnect: { lp_x11_close(connection) }) { [display] wakeRead, launch in
            Self.observe(connection, wakeRead: wakeRead, display: display, launch: launch)
        }
    }

    /// A launch begins (call before its spawn).
    /// - Parameters:
    ///   - launchedPid: the launched program's pid, 0 until it is spawned.
    ///   - onEvent: called on the observer's thread for each of its windows' events.
    public func beginLaunch(
        launchedPid: @escaping @Sendable () -> Int32, onEvent: @escaping @Sendable (DisplayEvent) -> Void
    ) {
        watch.beginLaunch(launchedPid: launchedPid, onEvent: onEvent)
    }

    /// The launch is over: returns what was seen of its windows.
    @discardableResult
    public func endLaunch() -> [DisplayEvent] { watch.endLaunch() }

    /// Stops watching and disconnects.
    public func stop() { watch.stop() }

    /// The observer's thread: poll the connection and the wake pipe, nothing else.
    private static func observe(_ observer: OpaquePointer, wakeRead: Int32, display: String, launch: CurrentLaunch) {
        var generation = 0
        var rootKnown = false
        var descriptors = [
            pollfd(fd: lp_x11_fd(observer), events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [lp_x11_event](repeating: lp_x11_event(), count: 32)
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno != EINTR { return }
            if descriptors[1].revents != 0, DisplayWatch.stopRequested(wakeRead) { return }
            // A new launch forgets the last one's windows; its pid is learnt once spawned
            // (windows made before that are checked at their map, see CFrameX11).
            let (current, pidSource) = launch.state.withLock { ($0.generation, $0.launchedPid) }
            if current != generation {
                generation = current
                rootKnown = false
                lp_x11_begin_launch(observer)
            }
            if !rootKnown, let pid = pidSource?(), pid > 0 {
                lp_x11_set_root_pid(observer, pid)
                rootKnown = true
            }
            let count = lp_x11_dispatch(observer, &buffer, Int32(buffer.count))
            if count < 0 { return }  // the server went away
            for raw in buffer.prefix(Int(count)) {
                let event = DisplayEvent(
                    kind: raw.kind == Int32(LP_X11_FIRST_FRAME.rawValue) ? .firstFrame : .windowMapped,
                    atNs: raw.at_ns, pid: raw.pid, window: "0x" + String(raw.window, radix: 16),
                    display: display)
                launch.deliver(event, generation: generation)
            }
        }
    }
}
