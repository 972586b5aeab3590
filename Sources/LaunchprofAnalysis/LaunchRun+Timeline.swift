import LaunchprofReport

extension LaunchRun {
    /// A run from its timeline.
    public init(
        index: Int, pid: Int32, timeline: PhaseTimeline, timedOut: Bool = false,
        residentBeforeBytes: UInt64? = nil, closureBytes: UInt64? = nil, tracerPauseNs: UInt64? = nil,
        outcome: RunOutcome? = nil
    ) {
        self.init(
            index: index, pid: pid, exitStatus: timeline.exitStatus.map(RunExit.init),
            phases: timeline.phases, metrics: timeline.metrics, absent: timeline.absent,
            warnings: timeline.warnings, timedOut: timedOut,
            residentBeforeBytes: residentBeforeBytes, closureBytes: closureBytes,
            tracerPauseNs: tracerPauseNs,
            outcome: outcome ?? RunOutcome(timeline: timeline, timedOut: timedOut))
    }
}
