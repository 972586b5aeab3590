import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Observes the launch boundaries with the session's uprobes (`UprobeObserver`): the child never
/// stops at a boundary (ptrace then only controls the process). Its hits are read from the ring
/// buffers once it has ended, turned into the same events by the same rules
/// (`UprobeLaunchEvents`) and merged among the tracer's (`EventMerge`).
struct UprobeLaunchObserver: LaunchObserver {
    let pid: pid_t
    let uprobes: UprobeRequest
    /// The plan of each image, in exec order.
    private var plans: [ImagePlan?] = []

    /// Watches `pid`'s hits from `spawnedAt` on: called once the spawn returns, before the tracer
    /// first waits, so nothing of this work falls inside the exec stop.
    init(pid: pid_t, uprobes: UprobeRequest, spawnedAt: UInt64) {
        self.pid = pid
        self.uprobes = uprobes
        uprobes.observer.watch(pid: pid, since: spawnedAt)
    }

    /// Arms the first image's probes not armed yet, before the spawn: a registration waits for a
    /// grace period, which then falls outside the launch (a later image met for the first time is
    /// armed at its exec stop, inside the launch).
    static func armBeforeSpawn(_ plan: ImagePlan, uprobes: UprobeRequest, path: String) throws(TracerError) {
        // The runtime probes too: what the holder refuses is reported at the image's start.
        if !uprobes.observer.isArmed(runtime: plan.runtime.probes) { _ = uprobes.observer.arm(runtime: plan.runtime.probes) }
        guard !uprobes.observer.isArmed(plan.uprobes) else { return }
        do throws(UprobeError) {
            try uprobes.observer.arm(plan.uprobes)
        } catch {
            throw .cannotObserve(path: path, detail: error.description)
        }
    }

    /// No thread can run into a breakpoint of launchprof's: threads go untraced.
    var tracesThreadsUntilMain: Bool { false }
    var stopsAtMain: Bool { false }
    /// Image 0's probes are armed before the spawn; a later image's at its exec stop.
    var writesIntoChild: Bool { false }
    /// Known only once the hits are read, after the child has ended.
    var reachedMain: Bool { false }

    mutating func startImage(_ image: Int, plan: ImagePlan?, into events: inout [LaunchEvent]) throws(TracerError) {
        plans.append(plan)
        guard let plan else { return }
        for (phase, reason) in plan.uprobeUnobservable where !plan.unobservable.contains(where: { $0.phase == phase }) {
            events.append(.unobservable(phase: phase, reason: reason))
        }
        for (phase, reason) in plan.runtime.unobservable { events.append(.unobservable(phase: phase, reason: reason)) }
        // The probes were armed for the session (image 0's before the spawn); a later image met
        // for the first time gets them now, inside this launch (a registration waits for a grace
        // period): that run shows it. Runtime probes refused say which phases they would give.
        let refused = uprobes.observer.arm(runtime: plan.runtime.probes)
        for (phase, reason) in RuntimeProbePlan.unobservable(refused, holderRuns: UprobeHolderClient.shared() != nil) {
            events.append(.unobservable(phase: phase, reason: reason))
        }
        if image > 0, !uprobes.observer.isArmed(plan.uprobes) {
            do throws(UprobeError) {
                try uprobes.observer.arm(plan.uprobes)
            } catch {
                throw .unexpectedStop(pid: pid, detail: error.description)
            }
        }
    }

    func childTrapped(at time: UInt64, into events: inout [LaunchEvent]) throws(TracerError) -> Bool { false }

    func descendantTrapped(_ process: pid_t, forked: Bool) throws(TracerError) -> Bool { false }

    func finish(events: [LaunchEvent]) -> LaunchObservation {
        // The child is gone: every hit it made is in the buffers.
        pending(events: events).observation(of: events, drained: uprobes.observer.drain(pid: pid))
    }

    /// What turns the hits into events once they are read (`TraceRequest.defersUprobeHits`).
    func pending(events: [LaunchEvent]) -> PendingUprobeHits {
        var starts: [UInt64] = []
        for case .imageStarted(_, _, let time) in events { starts.append(time) }
        return PendingUprobeHits(
            pid: pid, observer: uprobes.observer, calibration: uprobes.calibration, imageStarts: starts, plans: plans)
    }
}
