import LaunchprofReport

/// Why launchprof cannot watch a display for the program's first frame. Each case names its
/// display and says what to do.
public enum FrameObserverError: LaunchprofError, Sendable, Equatable {
    /// Neither `$DISPLAY` nor `$WAYLAND_DISPLAY` is set in the program's environment.
    case noDisplay
    /// The X server at `display` did not accept launchprof's connection.
    case cannotConnect(display: String)
    /// The X server at `display` lacks an extension the observer needs.
    case missingExtension(display: String, name: String)
    /// `WAYLAND_DISPLAY` is a name, but `XDG_RUNTIME_DIR`, where its socket lives, is not set.
    case noRuntimeDirectory(display: String)
    /// No Wayland compositor accepts connections on the socket `WAYLAND_DISPLAY` names.
    case cannotConnectWayland(display: String, path: String)
    /// Another client's selection on the root window conflicts with launchprof's.
    case cannotSelect(display: String)
    /// The observer's thread or wake-up pipe could not be made.
    case system(operation: String, errno: Int32)

    /// No display to watch, or one that lacks what the observer needs.
    public var exitCause: ExitCause { .unavailable }

    public var description: String {
        switch self {
        case .noDisplay:
            "--ready frame needs a display: neither DISPLAY nor WAYLAND_DISPLAY is set (start an X server, e.g. `Xvfb :99 &`, and pass --env DISPLAY=:99)"
        case .cannotConnect(let display):
            "cannot connect to the X display \(display) (DISPLAY=\(display)): no server there, or it refused the connection (check xauth / XAUTHORITY)"
        case .missingExtension(let display, let name):
            "the X server on \(display) lacks the \(name) extension, which launchprof needs to see a first frame"
        case .noRuntimeDirectory(let display):
            "WAYLAND_DISPLAY=\(display) names a socket in XDG_RUNTIME_DIR, which is not set"
        case .cannotConnectWayland(let display, let path):
            "cannot connect to the Wayland display \(display) (\(path)): no compositor listens there"
        case .cannotSelect(let display):
            "cannot watch the root window of \(display) for new windows"
        case .system(let operation, let errno):
            "\(operation) failed for the frame observer: \(String(cString: strerror(errno)))"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
