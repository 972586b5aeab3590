/// When a launch counts as ready (its first frame) for a program that may not call the hooks.
public enum LaunchReadiness: Sendable, Equatable, Hashable, Codable {
    /// The app's `first-frame` hook if it calls one, else the child's exit (the default).
    case automatic
    /// The child's exit (unless the app calls `first-frame`, which always wins).
    case exit
    /// Only the app's `first-frame` hook.
    case hook
    /// The first line on the child's stdout matching `pattern`.
    case stdout(pattern: String)
    /// The first line on the child's stderr matching `pattern`.
    case stderr(pattern: String)
    /// The child's first listening socket.
    case listen
    /// The first frame of one of the program's windows on the display server (X11: `$DISPLAY`).
    case frame

    /// Parses the `--ready` argument: `exit`, `hook`, `listen`, `frame`, `stdout:REGEX`, `stderr:REGEX`.
    public init(argument: String) throws(LaunchReportError) {
        switch argument {
        case "exit": self = .exit
        case "hook": self = .hook
        case "listen": self = .listen
        case "frame": self = .frame
        case "auto", "automatic": self = .automatic
        default:
            if argument.hasPrefix("stdout:"), argument.count > 7 {
                self = .stdout(pattern: String(argument.dropFirst(7)))
            } else if argument.hasPrefix("stderr:"), argument.count > 7 {
                self = .stderr(pattern: String(argument.dropFirst(7)))
            } else {
                throw .invalidReadiness(argument)
            }
        }
    }

    /// The spelling `init(argument:)` accepts, as written in the report's `mode`.
    public var argument: String {
        switch self {
        case .automatic: "automatic"
        case .exit: "exit"
        case .hook: "hook"
        case .listen: "listen"
        case .frame: "frame"
        case .stdout(let pattern): "stdout:" + pattern
        case .stderr(let pattern): "stderr:" + pattern
        }
    }

    /// What a run waits for under this rule, as a timeout names it.
    public var awaitedEvent: String {
        switch self {
        case .automatic: "the first-frame hook or the program's exit"
        case .exit: "the program's exit"
        case .hook: "the first-frame hook"
        case .stdout(let pattern): "a line on stdout matching '\(pattern)'"
        case .stderr(let pattern): "a line on stderr matching '\(pattern)'"
        case .listen: "a listening socket"
        case .frame: "a first frame on a display"
        }
    }

    /// Whether a first frame seen by the display server counts: asked for, or automatic (a
    /// program that shows a window is ready at its first frame unless its hook says otherwise).
    public var displayFrameIsReadiness: Bool {
        self == .automatic || self == .frame
    }

    /// Whether the child's exit stands in for the first frame when the app sends none.
    public var exitIsReadiness: Bool {
        self == .automatic || self == .exit
    }
}
