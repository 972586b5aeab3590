/// Builds a `LaunchSummary` one run at a time, in memory that does not grow with the number of
/// runs (it grows only with the number of distinct phases).
public struct LaunchSummaryBuilder: Sendable {
    private struct PhaseKey: Hashable {
        var name: String
        var object: String?
        var task: String?
        var image: Int?
        var occurrence: Int
    }

    private struct PhaseAccumulator {
        var key: PhaseKey
        var start = StreamingStatistics()
        var duration = StreamingStatistics()
        var observer = StreamingStatistics()
        var states = StateStatistics()
        var source: String?
        var caller: String?
    }

    private var runs = 0
    private var failedRuns = 0
    private var metrics = [StreamingStatistics](repeating: StreamingStatistics(), count: 6)
    private var tracerPause = StreamingStatistics()
    private var minorFaults = StreamingStatistics()
    private var runsReadingFromDisk = 0
    private var majorFaults: UInt64 = 0
    private var phaseIndex: [PhaseKey: Int] = [:]
    private var phases: [PhaseAccumulator] = []
    private var prewarm = PrewarmSummaryBuilder()
    private var flags = FlagSummaryBuilder()
    private var outcomes: [LaunchSummary.OutcomeCount] = []
    private var threadStates = ThreadStatesSummaryBuilder()

    public init() {}

    public mutating func add(_ run: LaunchRun) {
        runs += 1
        let outcome = run.resolvedOutcome
        // A prewarm pair fails with either of its launches.
        if outcome.kind != .completed || run.prewarm?.ordinaryOutcome.map({ $0.kind != .completed }) == true {
            failedRuns += 1
        }
        if let slot = outcomes.firstIndex(where: { $0.outcome == outcome }) {
            outcomes[slot].runs += 1
        } else {
            outcomes.append(LaunchSummary.OutcomeCount(outcome: outcome, runs: 1))
        }
        for (slot, metric) in run.metrics.named.enumerated() {
            if let value = metric.valueNs { metrics[slot].record(value) }
        }
        if let pause = run.tracerPauseNs { tracerPause.record(pause) }
        if let minor = run.minorFaults { minorFaults.record(minor) }
        if let major = run.majorFaults, major > 0 {
            runsReadingFromDisk += 1
            majorFaults += major
        }
        if let prewarmRun = run.prewarm { prewarm.add(prewarmRun) }
        if let runFlags = run.flags { flags.add(runFlags) }
        if let states = run.threadStates { threadStates.add(states) }
        var seen: [PhaseKey: Int] = [:]
        for phase in run.phases {
            var key = PhaseKey(
                name: phase.name, object: phase.object, task: phase.task, image: phase.image,
                occurrence: 0)
            let occurrence = seen[key, default: 0]
            seen[key] = occurrence + 1
            key.occurrence = occurrence
            let slot: Int
            if let existing = phaseIndex[key] {
                slot = existing
            } else {
                slot = phases.count
                phaseIndex[key] = slot
                phases.append(PhaseAccumulator(key: key))
            }
            phases[slot].start.record(phase.startNs)
            phases[slot].duration.record(phase.durationNs)
            if let cost = phase.observerNs { phases[slot].observer.record(cost) }
            if let states = phase.threadState { phases[slot].states.record(states) }
            if phases[slot].source == nil { phases[slot].source = phase.source }
            if phases[slot].caller == nil { phases[slot].caller = phase.caller }
        }
    }

    public var summary: LaunchSummary {
        var summary = phaseSummary
        summary.prewarm = prewarm.summary
        summary.flags = flags.summaries
        summary.outcomes = runs == 0 ? nil : outcomes
        summary.threadStates = threadStates.summary
        if let minor = minorFaults.summary {
            summary.pageFaults = LaunchSummary.PageFaultSummary(
                runsReadingFromDisk: runsReadingFromDisk, majorFaults: majorFaults, medianMinorFaults: minor.median)
        }
        return summary
    }

    private var phaseSummary: LaunchSummary {
        LaunchSummary(
            runs: runs, failedRuns: failedRuns, timeToMainNs: metrics[0].summary,
            timeToFirstFrameNs: metrics[1].summary, extendedLaunchNs: metrics[2].summary,
            exitNs: metrics[3].summary, optimizedTimeToFirstFrameNs: metrics[4].summary,
            resumeTimeNs: metrics[5].summary, tracerPauseNs: tracerPause.summary,
            phases: phases.compactMap { accumulator -> PhaseSummary? in
                guard let start = accumulator.start.summary,
                    let duration = accumulator.duration.summary
                else { return nil }
                let key = accumulator.key
                var phase = PhaseSummary(
                    name: key.name, object: key.object, task: key.task, image: key.image,
                    occurrence: key.occurrence == 0 ? nil : key.occurrence, startNs: start,
                    durationNs: duration)
                phase.observerNs = accumulator.observer.summary
                phase.threadState = accumulator.states.medians
                phase.source = accumulator.source
                phase.caller = accumulator.caller
                return phase
            }
            // Time order by median start (a phase first seen in a later run still lands where it
            // happens); ties keep first appearance.
            .enumerated().sorted { ($0.element.startNs.median, $0.offset) < ($1.element.startNs.median, $1.offset) }
            .map(\.element))
    }
}
