import LaunchprofAnalysis
import LaunchprofReport

extension RunSession {
    /// The run's outcome: launchprof's interruption (`interruptedBy`: the signal that ended the
    /// child through it), the monitor's timeout (with what it waited for) and its finding that
    /// the program handles no lifecycle signal come first, then the timeline's own ending.
    static func outcome(
        of timeline: PhaseTimeline, _ observed: RunMonitor.Outcome, timeoutNs: UInt64?, resumeCycles: Int,
        interruptedBy: Int32? = nil
    ) -> RunOutcome {
        if let interruptedBy { return .interrupted(by: interruptedBy) }
        if observed.timedOut {
            return .timedOut(after: timeoutNs, waitingFor: observed.waitedFor ?? "readiness")
        }
        let ending = RunOutcome(timeline: timeline, timedOut: false)
        guard ending.kind == .completed, resumeCycles > 0 else { return ending }
        if let reason = observed.noLifecycleHandling {
            return RunOutcome(kind: .noLifecycleHandling, reason: reason)
        }
        if observed.lifecycle.isEmpty {
            // Ready at its exit: there was no running app left to send to the background.
            return RunOutcome(
                kind: .noLifecycleHandling,
                reason: "the program exited at its first frame, before any resume cycle: --resume-cycles needs an app that keeps running after its first frame")
        }
        return ending
    }

    /// `--resume-cycles`: the run's `resumeTimeNs` (the median of its cycles) and its states,
    /// in ns from the spawn.
    static func addLifecycle(_ run: inout LaunchRun, _ observed: RunMonitor.Outcome, spawn: LaunchEvent?) {
        guard case .spawned(let spawnedAt) = spawn else { return }
        let sorted = observed.resumeTimesNs.sorted()
        if !sorted.isEmpty { run.metrics.resumeTimeNs = sorted[(sorted.count - 1) / 2] }
        var states = [LifecycleState(.notRunning, atNs: 0), LifecycleState(.inactive, atNs: 0)]
        if let firstFrame = run.metrics.timeToFirstFrameNs { states.append(LifecycleState(.active, atNs: firstFrame)) }
        for (state, time) in observed.lifecycle {
            states.append(LifecycleState(state, atNs: time &- min(time, spawnedAt)))
        }
        if let exit = run.phases.last(where: { $0.name == "exit" }) {
            states.append(LifecycleState(.terminated, atNs: exit.startNs))
        }
        run.states = states
    }
}
