import LaunchprofDisplay
import LaunchprofReport
import LaunchprofTracing

/// The display a session watches for its program's first frame, through one observer for all
/// its launches.
///
/// `--ready frame` needs a display: the child's `$DISPLAY`, connected to before the first run, so
/// a missing server or extension is an error before anything runs. Automatic readiness watches
/// the child's `$DISPLAY` when it is set and reachable, and a program that shows a window is then
/// ready at its first frame (the app's own first-frame hook still wins); where the display cannot
/// be watched, the launch is ready at the exit as before.
final class FrameWatch: Sendable {
    let observer: X11FrameObserver

    private init(observer: X11FrameObserver) { self.observer = observer }

    /// The watch for `configuration`, nil when none is wanted or (automatic) possible.
    static func resolve(_ configuration: RunConfiguration) throws(RunError) -> FrameWatch? {
        guard configuration.readiness.displayFrameIsReadiness else { return nil }
        let display = configuration.childEnvironment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        do throws(FrameObserverError) {
            guard let display else { throw .noDisplay }
            return FrameWatch(observer: try X11FrameObserver(display: display))
        } catch {
            if configuration.readiness == .frame { throw .display(error) }
            return nil
        }
    }

    /// A launch begins (before its spawn): its windows' events go to `monitor`.
    func begin(control: TraceControl, monitor: RunMonitor) {
        monitor.watchedDisplay = observer.display
        observer.beginLaunch(
            launchedPid: { control.pid },
            onEvent: { [weak monitor] event in monitor?.displayEventSeen(event) })
    }

    func end() { observer.endLaunch() }

    /// What every run of the session should say about how its windows were seen.
    var warnings: [TimelineWarning] {
        observer.ownersFromXResource ? [] : [TimelineWarning(
            .displayOwnerFromWindowProperty,
            "the X server on \(observer.display) lacks the X-Resource extension: window owners come from _NET_WM_PID, which raw Xlib/xcb programs do not set")]
    }
}
