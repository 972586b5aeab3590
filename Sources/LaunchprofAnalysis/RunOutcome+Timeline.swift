import LaunchprofReport

extension RunOutcome {
    /// The outcome of a run that did not time out, from its timeline: a first frame means it
    /// reached readiness; no observed first instruction (no `exec` phase) means it never started.
    public init(timeline: PhaseTimeline, timedOut: Bool) {
        if timedOut {
            self = .timedOut(after: nil, waitingFor: "readiness")
            return
        }
        let exit = timeline.exitStatus.map(RunExit.init)
        if timeline.exitedInLoader, exit?.killedBy == nil, let code = exit?.code, code != 0 {
            self.init(
                kind: .failedToStart, exitCode: code,
                reason: "the dynamic loader exited with status \(code) before the program's own code ran "
                    + "(a library or symbol it needs is missing: the program's stderr says which)")
            return
        }
        let started = timeline.phases.contains { $0.name == LaunchPhase.exec }
        self.init(
            exit: exit, reachedReadiness: timeline.metrics.timeToFirstFrameNs != nil, startedProgram: started,
            notStartedReason: timeline.absent.first { $0.phase == LaunchPhase.exec }?.reason)
    }
}
