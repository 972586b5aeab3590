/// A phase that could not be measured in a run, and why. launchprof never estimates a phase it
/// could not observe: it lists it here instead.
public struct AbsentPhase: Sendable, Equatable, Hashable, Codable {
    public var phase: String
    public var reason: String
    /// The image of an exec chain; nil for image 0.
    public var image: Int?

    public init(phase: String, reason: String, image: Int? = nil) {
        self.phase = phase
        self.reason = reason
        self.image = image
    }
}
