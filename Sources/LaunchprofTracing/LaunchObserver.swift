import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// What observes the launch boundaries of one traced child for `LaunchTracer`: ptrace
/// breakpoints (`BreakpointObserver`) or uprobes (`UprobeLaunchObserver`).
///
/// The tracer keeps process control (spawn, the stop loop, forks, the prewarm freeze, crashes,
/// reaping) and calls its observer at these seams, on the tracer's thread. Both observers turn
/// their hits into events with `BoundaryRecorder`, so a new boundary is one `Boundary` case, one
/// recorder rule and the planners' entries (`ImagePlanner` for breakpoints, `UprobePlanner`).
protocol LaunchObserver {
    /// Whether the child's threads must be traced until `main` (they could run into an int3).
    var tracesThreadsUntilMain: Bool { get }
    /// Whether the child stops at `main` (where the tracer unpins it and may freeze it); an
    /// observer that never stops it there lets the tracer unpin it at the first exec stop.
    var stopsAtMain: Bool { get }
    /// `main` was reached in the current image (known while the child runs).
    var reachedMain: Bool { get }
    /// Whether `startImage` writes into the child (breakpoints), so that it must be called while
    /// the child is stopped; otherwise image 0's is called once the child runs on.
    var writesIntoChild: Bool { get }

    /// The child is at the exec stop of image `image` (0: the first), planned by `plan` (nil:
    /// not analysed; the tracer notes what that leaves unobservable), or has just left it (see
    /// `writesIntoChild`). Arms what observes it and records the notes of what it cannot observe.
    mutating func startImage(_ image: Int, plan: ImagePlan?, into events: inout [LaunchEvent]) throws(TracerError)

    /// The child stopped with SIGTRAP at `time`: true when the observer caused it (its events
    /// recorded), false for the tracer to handle the signal.
    mutating func childTrapped(at time: UInt64, into events: inout [LaunchEvent]) throws(TracerError) -> Bool

    /// A descendant stopped with SIGTRAP: true when it ran into the observer's trap (a `forked`
    /// copy of the child's memory holds a copy of every int3).
    mutating func descendantTrapped(_ process: pid_t, forked: Bool) throws(TracerError) -> Bool

    /// The child has ended: the launch's events (the tracer's, in order) completed with what the
    /// observer saw apart from the stops, and its own costs.
    func finish(events: [LaunchEvent]) -> LaunchObservation
}

/// What an observer hands the tracer at the end of a launch.
struct LaunchObservation {
    /// All the launch's events, in order.
    var events: [LaunchEvent]
    /// The observer's costs beyond the tracer's stops (each probe hit).
    var costs: [ObserverCost] = []
    /// Probe hits the ring buffers had no room for.
    var lostSamples: UInt64 = 0
}
