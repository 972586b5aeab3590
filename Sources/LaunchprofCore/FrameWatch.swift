import LaunchprofDisplay
import LaunchprofReport
import LaunchprofTracing

/// The displays a session watches for its program's first frame, through one observer each for
/// all its launches: the X server of the child's `$DISPLAY`, the Wayland compositor of its
/// `$WAYLAND_DISPLAY` (through a relay the child then connects to instead).
///
/// `--ready frame` needs a display, and each one named must be watchable: a missing server or
/// extension is an error before the first run. Automatic readiness watches the displays that
/// are named and reachable, and a program that shows a window is then ready at its first frame
/// (the app's own first-frame hook still wins); where none can be watched, the launch is ready at
/// the exit as before.
final class FrameWatch: Sendable {
    let x11: X11FrameObserver?
    let wayland: WaylandFrameObserver?

    private init(x11: X11FrameObserver?, wayland: WaylandFrameObserver?) {
        self.x11 = x11
        self.wayland = wayland
    }

    deinit {
        x11?.stop()
        wayland?.stop()
    }

    /// The watch for `configuration`, nil when none is wanted or (automatic) possible.
    static func resolve(_ configuration: RunConfiguration) throws(RunError) -> FrameWatch? {
        guard configuration.readiness.watchers.contains(.display) else { return nil }
        let required = configuration.readiness.requiresDisplay
        let environment = configuration.childEnvironment
        func named(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        var x11: X11FrameObserver?
        var wayland: WaylandFrameObserver?
        do throws(FrameObserverError) {
            if let display = named("DISPLAY") {
                do throws(FrameObserverError) { x11 = try X11FrameObserver(display: display) } catch {
                    if required { throw error }
                }
            }
            if let display = named("WAYLAND_DISPLAY") {
                do throws(FrameObserverError) {
                    wayland = try WaylandFrameObserver(display: display, runtimeDirectory: named("XDG_RUNTIME_DIR"))
                } catch {
                    if required { throw error }
                }
            }
            if required, x11 == nil, wayland == nil { throw .noDisplay }
        } catch {
            x11?.stop()
            throw .display(error)
        }
        guard x11 != nil || wayland != nil else { return nil }
        return FrameWatch(x11: x11, wayland: wayland)
    }

    /// A launch begins (before its spawn): its windows' events go to `monitor`.
    func begin(control: TraceControl, monitor: RunMonitor) {
        monitor.watchedDisplay = [x11.map { "display \($0.display)" }, wayland.map { "Wayland display \($0.display)" }]
            .compactMap { $0 }.joined(separator: " or ")
        let onEvent: @Sendable (DisplayEvent) -> Void = { [weak monitor] event in monitor?.displayEventSeen(event) }
        x11?.beginLaunch(launchedPid: { control.pid }, onEvent: onEvent)
        wayland?.beginLaunch(launchedPid: { control.pid }, onEvent: onEvent)
    }

    func end() {
        x11?.endLaunch()
        wayland?.endLaunch()
    }

    /// The child's environment with `WAYLAND_DISPLAY` pointing at the relay.
    func childEnvironment(_ environment: [String]) -> [String] {
        guard let wayland else { return environment }
        return environment.filter { !$0.hasPrefix("WAYLAND_DISPLAY=") } + ["WAYLAND_DISPLAY=" + wayland.relayPath]
    }

    /// What every run of the session should say about how its windows were seen.
    var warnings: [TimelineWarning] {
        guard let x11, !x11.ownersFromXResource else { return [] }
        return [TimelineWarning(
            .displayOwnerFromWindowProperty,
            "the X server on \(x11.display) lacks the X-Resource extension: window owners come from _NET_WM_PID, which raw Xlib/xcb programs do not set")]
    }
}
