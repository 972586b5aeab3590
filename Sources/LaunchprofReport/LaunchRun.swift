/// One measured launch in a report.
public struct LaunchRun: Sendable, Equatable, Codable {
    /// 0-based index among the measured runs (warm-up runs are not reported).
    public var index: Int
    public var pid: Int32
    /// How the child ended; nil when it had not ended when the trace stopped.
    public var exitStatus: RunExit?
    public var phases: [LaunchPhase]
    public var metrics: LaunchMetrics
    public var absent: [AbsentPhase]
    public var warnings: [TimelineWarning]
    /// The run never became ready before `--timeout`; its timeline is partial.
    public var timedOut: Bool
    /// How the run ended: completed, or why not (nil in reports written before it was recorded;
    /// `resolvedOutcome` then tells it from `exitStatus` and `timedOut`).
    public var outcome: RunOutcome?
    /// `--cold`: bytes of the closure's files resident in the page cache just before the run.
    public var residentBeforeBytes: UInt64?
    /// `--cold`: total bytes of the closure's files (so residency reads as a fraction).
    public var closureBytes: UInt64?
    /// How long the child was held stopped while launchprof handled its breakpoints, in all
    /// (already inside the phases' times: the cost of observing this run).
    public var tracerPauseNs: UInt64?
    /// The child's page faults over its life, as the kernel counted them when it was reaped:
    /// major ones read a page from disk (a warm launch takes none), minor ones found the page
    /// in memory. Nil when launchprof did not reap the child itself.
    public var majorFaults: UInt64?
    public var minorFaults: UInt64?
    /// `--sample`: heavy main-thread work found during the launch.
    public var flags: [LaunchFlag]?
    /// `--sample`: the main thread's sampled stacks over the whole launch.
    public var callStackTree: CallStackTree?
    /// `launchprof prewarm`: the prewarm part, the hold, the resume and the paired ordinary launch.
    public var prewarm: PrewarmRun?
    /// The app's lifecycle states in the order entered (`launchprof prewarm`, `--resume-cycles`).
    public var states: [LifecycleState]?
    /// `--sample`: the rate, the main thread's time by state, per-phase call stack trees, or the
    /// "too short to sample" note.
    public var sampling: LaunchSampling?
    /// The main thread's time by scheduler state over the launch, its causes and the slow-launch
    /// reasons; nil where the scheduler's events could not be read (or `--no-thread-states`).
    public var threadStates: LaunchThreadStates?
    /// The spawn on the system's clocks (the phases count from it); nil in reports that predate it.
    public var spawnedAt: SpawnInstant?
    /// `bench --rounds`: the interleaved session that made this run (one id per bench, shared by
    /// every launch of its suite) and the round it was made in (0-based). Runs of two launches
    /// with the same session and round were measured side by side, on the same CPU, so `compare`
    /// can pair them. Nil for runs not made in rounds (`run`, `bench` without `--rounds`).
    public var session: String?
    public var round: Int?
    /// A launch `launchprof monitor` recorded (not started by launchprof): its start type and
    /// wall-clock time.
    public var field: FieldLaunchFacts?

    public init(
        index: Int, pid: Int32, exitStatus: RunExit?, phases: [LaunchPhase],
        metrics: LaunchMetrics, absent: [AbsentPhase] = [], warnings: [TimelineWarning] = [],
        timedOut: Bool = false, residentBeforeBytes: UInt64? = nil, closureBytes: UInt64? = nil,
        tracerPauseNs: UInt64? = nil, outcome: RunOutcome? = nil
    ) {
        self.tracerPauseNs = tracerPauseNs
        self.outcome = outcome
        self.index = index
        self.pid = pid
        self.exitStatus = exitStatus
        self.phases = phases
        self.metrics = metrics
        self.absent = absent
        self.warnings = warnings
        self.timedOut = timedOut
        self.residentBeforeBytes = residentBeforeBytes
        self.closureBytes = closureBytes
    }

    /// The run's outcome, told from its exit and timeout flag in a report that predates
    /// `outcome`.
    public var resolvedOutcome: RunOutcome {
        outcome ?? RunOutcome(
            legacyExit: exitStatus, timedOut: timedOut,
            reachedReadiness: metrics.timeToFirstFrameNs != nil || metrics.optimizedTimeToFirstFrameNs != nil)
    }

    /// Whether the run is a launch for MetricKit's launch histograms: it reached readiness and
    /// ended well (a timeout, a crash or an early exit is not a launch).
    public var countsAsLaunch: Bool {
        let kind = resolvedOutcome.kind
        return kind == .completed || kind == .noLifecycleHandling
    }

    /// Whether the run failed (any outcome but `completed`): `launchprof run` exits non-zero.
    public var failed: Bool {
        resolvedOutcome.kind != .completed
    }
}
