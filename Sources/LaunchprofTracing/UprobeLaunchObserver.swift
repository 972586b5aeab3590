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

    init(pid: pid_t, uprobes: UprobeRequest) {
        self.pid = pid
        self.uprobes = uprobes
    }

    /// No thread can run into a breakpoint of launchprof's: threads go untraced.
    var tracesThreadsUntilMain: Bool { false }
    var stopsAtMain: Bool { false }
    /// Known only once the hits are read, after the child has ended.
    var reachedMain: Bool { false }

    mutating func startImage(_ image: Int, plan: ImagePlan?, into events: inout [LaunchEvent]) throws(TracerError) {
        plans.append(plan)
        guard let plan else { return }
        for (phase, reason) in plan.uprobeUnobservable where !plan.unobservable.contains(where: { $0.phase == phase }) {
            events.append(.unobservable(phase: phase, reason: reason))
        }
        // Its hits are kept for this launch even if another session reads the rings first.
        if image == 0 { uprobes.observer.watch(pid: pid) }
        // The probes were armed for the session; an image met for the first time gets them
        // now, inside this launch (a registration waits for a grace period): that run shows it.
        if !uprobes.observer.isArmed(plan.uprobes) {
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
