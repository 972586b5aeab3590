/// Statistics across a report's runs: per metric (keys named like the metrics) and per phase.
public struct LaunchSummary: Sendable, Equatable, Codable {
    /// Runs summarized.
    public var runs: Int
    /// Runs that failed (non-zero exit, signal, timeout).
    public var failedRuns: Int
    public var timeToMainNs: SummaryStatistics?
    public var timeToFirstFrameNs: SummaryStatistics?
    public var extendedLaunchNs: SummaryStatistics?
    public var exitNs: SummaryStatistics?
    /// One entry per distinct phase (name, object, task, image, occurrence), in the order the
    /// phases first appeared.
    public var phases: [PhaseSummary]

    public init(
        runs: Int = 0, failedRuns: Int = 0, timeToMainNs: SummaryStatistics? = nil,
        timeToFirstFrameNs: SummaryStatistics? = nil, extendedLaunchNs: SummaryStatistics? = nil,
        exitNs: SummaryStatistics? = nil, phases: [PhaseSummary] = []
    ) {
        self.runs = runs
        self.failedRuns = failedRuns
        self.timeToMainNs = timeToMainNs
        self.timeToFirstFrameNs = timeToFirstFrameNs
        self.extendedLaunchNs = extendedLaunchNs
        self.exitNs = exitNs
        self.phases = phases
    }
}

/// The distribution of one phase across runs.
public struct PhaseSummary: Sendable, Equatable, Codable {
    public var name: String
    public var object: String?
    public var task: String?
    public var image: Int?
    /// 1 for the second phase of the same name (and object, task, image) in a run, and so on;
    /// nil for the first.
    public var occurrence: Int?
    public var startNs: SummaryStatistics
    public var durationNs: SummaryStatistics

    public init(
        name: String, object: String? = nil, task: String? = nil, image: Int? = nil,
        occurrence: Int? = nil, startNs: SummaryStatistics, durationNs: SummaryStatistics
    ) {
        self.name = name
        self.object = object
        self.task = task
        self.image = image
        self.occurrence = occurrence
        self.startNs = startNs
        self.durationNs = durationNs
    }
}
