/// One measured closure of `launchprof calibrate`: its loader work, the measured and the fitted
/// time (`CostModelFit.Point`).
public struct CalibrationPoint: Codable, Sendable, Equatable {
    /// What was measured (a program, or a synthetic closure's name).
    public var name: String
    public var work: LoaderWork
    /// The median of loader.map + loader.relocate over `runs` launches.
    public var measuredNs: Int
    public var runs: Int
    /// The fitted model's estimate (filled in by `fit`).
    public var estimatedNs: Int

    public init(name: String, work: LoaderWork, measuredNs: Int, runs: Int, estimatedNs: Int = 0) {
        self.name = name
        self.work = work
        self.measuredNs = measuredNs
        self.runs = runs
        self.estimatedNs = estimatedNs
    }

    /// (estimate − measured) ÷ measured.
    public var relativeError: Double {
        measuredNs == 0 ? 0 : Double(estimatedNs - measuredNs) / Double(measuredNs)
    }
}
