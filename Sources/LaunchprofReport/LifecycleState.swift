/// One state of the app's lifecycle, in the order entered, like UIKit's application states.
public struct LifecycleState: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        case notRunning
        /// Launched ahead of use and frozen (prewarm).
        case prewarmed
        /// Launching: between the user's launch (or the resume) and the first frame.
        case inactive
        case active
        case background
        case suspended
        case terminated
    }

    public var state: State
    /// When the state was entered, in ns from the spawn.
    public var atNs: UInt64

    public init(_ state: State, atNs: UInt64) {
        self.state = state
        self.atNs = atNs
    }
}
