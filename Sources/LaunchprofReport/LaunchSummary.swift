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
    public var optimizedTimeToFirstFrameNs: SummaryStatistics?
    public var resumeTimeNs: SummaryStatistics?
    /// How long launchprof held the child stopped per run (the cost of observing it, already
    /// inside the times above).
    public var tracerPauseNs: SummaryStatistics?
    /// One entry per distinct phase (name, object, task, image, occurrence), ordered by median
    /// start (ties in the order they first appeared).
    public var phases: [PhaseSummary]
    /// `launchprof prewarm`: the saving, the frozen memory, hazards and the pool.
    public var prewarm: PrewarmSummary?
    /// `--sample`: the flags of every run, one entry per kind, phase, function and system call.
    public var flags: [FlagSummary]?
    /// How many runs ended each way, one entry per distinct outcome in the order first seen
    /// (nil in reports written before outcomes were recorded).
    public var outcomes: [OutcomeCount]?
    /// The runs' page faults, where launchprof reaped the children (nil otherwise).
    public var pageFaults: PageFaultSummary?
    /// The runs' thread states: the launch's median per state and the slow-launch reasons
    /// raised; nil when no run recorded states.
    public var threadStates: ThreadStatesSummary?

    /// Page faults over the runs: a warm launch reads no page from disk.
    public struct PageFaultSummary: Sendable, Equatable, Codable {
        /// Runs that took major faults (read pages from disk): not warm launches.
        public var runsReadingFromDisk: Int
        /// Major faults over all runs.
        public var majorFaults: UInt64
        /// The median run's minor faults (pages found in memory and mapped).
        public var medianMinorFaults: UInt64

        public init(runsReadingFromDisk: Int, majorFaults: UInt64, medianMinorFaults: UInt64) {
            self.runsReadingFromDisk = runsReadingFromDisk
            self.majorFaults = majorFaults
            self.medianMinorFaults = medianMinorFaults
        }
    }

    /// Runs that ended one way.
    public struct OutcomeCount: Sendable, Equatable, Codable {
        public var outcome: RunOutcome
        public var runs: Int

        public init(outcome: RunOutcome, runs: Int) {
            self.outcome = outcome
            self.runs = runs
        }
    }

    public init(
        runs: Int = 0, failedRuns: Int = 0, timeToMainNs: SummaryStatistics? = nil,
        timeToFirstFrameNs: SummaryStatistics? = nil, extendedLaunchNs: SummaryStatistics? = nil,
        exitNs: SummaryStatistics? = nil, optimizedTimeToFirstFrameNs: SummaryStatistics? = nil,
        resumeTimeNs: SummaryStatistics? = nil, tracerPauseNs: SummaryStatistics? = nil,
        phases: [PhaseSummary] = []
    ) {
        self.tracerPauseNs = tracerPauseNs
        self.runs = runs
        self.failedRuns = failedRuns
        self.timeToMainNs = timeToMainNs
        self.timeToFirstFrameNs = timeToFirstFrameNs
        self.extendedLaunchNs = extendedLaunchNs
        self.exitNs = exitNs
        self.optimizedTimeToFirstFrameNs = optimizedTimeToFirstFrameNs
        self.resumeTimeNs = resumeTimeNs
        self.phases = phases
    }
}
