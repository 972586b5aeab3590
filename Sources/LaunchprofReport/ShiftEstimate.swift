/// A shift between two samples and its confidence interval, in ns (new − base).
public struct ShiftEstimate: Sendable, Equatable, Codable {
    public var shiftNs: Int64
    public var lowerNs: Int64
    public var upperNs: Int64
    /// The interval's confidence level, e.g. 0.95.
    public var confidence: Double

    public init(shiftNs: Int64, lowerNs: Int64, upperNs: Int64, confidence: Double) {
        self.shiftNs = shiftNs
        self.lowerNs = lowerNs
        self.upperNs = upperNs
        self.confidence = confidence
    }
}
