/// The headline figures of one launch, in ns from the spawn. A metric is nil (left out of the
/// JSON) when its boundary was not observed in this run; the run's `absent` list says why.
public struct LaunchMetrics: Sendable, Equatable, Codable {
    /// Entry of `main` in the last image of an exec chain that reached `main`.
    public var timeToMainNs: UInt64?
    /// The first frame: the app's hook, else readiness (output line, listening socket, exit).
    public var timeToFirstFrameNs: UInt64?
    /// The later of the first frame and the end of every extended-launch task.
    public var extendedLaunchNs: UInt64?
    /// The child's exit; nil when launchprof ended it (timeout, readiness reached, Ctrl-C).
    public var exitNs: UInt64?
    /// A prewarmed launch: the first frame timed from the resume (the user's tap), not from the
    /// spawn, so the prewarm and the hold are never inside it (MetricKit's optimized time to
    /// first draw).
    public var optimizedTimeToFirstFrameNs: UInt64?
    /// Resume from background to active (`didBecomeActive`), the median of the run's resume
    /// cycles (MetricKit's application resume time).
    public var resumeTimeNs: UInt64?

    public init(
        timeToMainNs: UInt64? = nil, timeToFirstFrameNs: UInt64? = nil,
        extendedLaunchNs: UInt64? = nil, exitNs: UInt64? = nil,
        optimizedTimeToFirstFrameNs: UInt64? = nil, resumeTimeNs: UInt64? = nil
    ) {
        self.timeToMainNs = timeToMainNs
        self.timeToFirstFrameNs = timeToFirstFrameNs
        self.extendedLaunchNs = extendedLaunchNs
        self.exitNs = exitNs
        self.optimizedTimeToFirstFrameNs = optimizedTimeToFirstFrameNs
        self.resumeTimeNs = resumeTimeNs
    }

    /// The metric names, in report order, with their values.
    public var named: [(name: String, valueNs: UInt64?)] {
        [
            ("timeToMainNs", timeToMainNs), ("timeToFirstFrameNs", timeToFirstFrameNs),
            ("extendedLaunchNs", extendedLaunchNs), ("exitNs", exitNs),
            ("optimizedTimeToFirstFrameNs", optimizedTimeToFirstFrameNs), ("resumeTimeNs", resumeTimeNs),
        ]
    }
}
