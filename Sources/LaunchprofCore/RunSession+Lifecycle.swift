import LaunchprofReport

extension RunSession {
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
