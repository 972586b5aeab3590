/// Accumulates the per-run prewarm figures of a session into a `PrewarmSummary`, in memory that
/// does not grow with the number of runs.
public struct PrewarmSummaryBuilder: Sendable {
    private var runs = 0
    private var saving = SignedStreamingStatistics()
    private var losses = 0
    private var prewarm = StreamingStatistics()
    private var hold = StreamingStatistics()
    private var ordinary = StreamingStatistics()
    private var ordinaryMain = StreamingStatistics()
    private var pss = StreamingStatistics()
    private var frozenCPURuns = 0
    private var ordinaryOutcomes: [LaunchSummary.OutcomeCount] = []

    public init() {}

    public mutating func add(_ run: PrewarmRun) {
        runs += 1
        if let savingNs = run.savingNs {
            if savingNs < 0 { losses += 1 }
            saving.record(savingNs)
        }
        // A pool miss launched from the spawn: it had no prewarm part and no hold.
        if run.poolHit != false {
            prewarm.record(run.prewarmNs)
            hold.record(run.holdNs)
        }
        if let outcome = run.ordinaryOutcome {
            if let slot = ordinaryOutcomes.firstIndex(where: { $0.outcome == outcome }) {
                ordinaryOutcomes[slot].runs += 1
            } else {
                ordinaryOutcomes.append(LaunchSummary.OutcomeCount(outcome: outcome, runs: 1))
            }
        }
        if let value = run.ordinaryTimeToFirstFrameNs { ordinary.record(value) }
        if let value = run.ordinaryTimeToMainNs { ordinaryMain.record(value) }
        if let value = run.frozenPSSBytes { pss.record(value) }
        if run.frozenCPUNs > 0 { frozenCPURuns += 1 }
    }

    /// Nil before the first prewarm run (a `launchprof run` report has no prewarm summary).
    public var summary: PrewarmSummary? {
        guard runs > 0 else { return nil }
        var summary = PrewarmSummary(
            savingNs: saving.summary, losses: losses, prewarmNs: prewarm.summary,
            holdNs: hold.summary, ordinaryTimeToFirstFrameNs: ordinary.summary,
            frozenPSSBytes: pss.summary, frozenCPURuns: frozenCPURuns,
            ordinaryOutcomes: ordinaryOutcomes.isEmpty ? nil : ordinaryOutcomes)
        summary.ordinaryTimeToMainNs = ordinaryMain.summary
        return summary
    }
}
