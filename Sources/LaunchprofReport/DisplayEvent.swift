/// What the display server saw of the launched program's windows, without the app's help.
public struct DisplayEvent: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// A top-level window of the program (or a descendant) was shown, before it has content.
        case windowMapped
        /// The program's first content in a shown top-level window reached the display server.
        case firstFrame
    }

    public var kind: Kind
    /// CLOCK_MONOTONIC when launchprof received the server's report.
    public var atNs: UInt64
    /// The process that owns the window: the launched program or one of its descendants.
    public var pid: Int32
    /// The window, as the server names it (an X11 window id in hex).
    public var window: String
    /// The display: `:99` (X11) or the Wayland socket's name.
    public var display: String

    public init(kind: Kind, atNs: UInt64, pid: Int32, window: String, display: String) {
        self.kind = kind
        self.atNs = atNs
        self.pid = pid
        self.window = window
        self.display = display
    }
}
