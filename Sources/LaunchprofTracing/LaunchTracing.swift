/// What traces one launch for a session: spawns the request's program, observes its launch
/// boundaries and returns what it saw once the child has ended.
///
/// `LaunchTracer` (ptrace, with breakpoints or uprobes) is the real one; the sessions take any
/// conformer, so the layers above the tracer (re-runs on new images, warnings, observer
/// accounting, prewarm pairing) are tested with scripted results.
public protocol LaunchTracing {
    /// Traces one launch to its end. `planForImage` gives the plan of an image the child execs
    /// (nil: not analysed yet, reported in `TraceResult.unplannedImages`). `control` lets
    /// another thread end the child. Called on one thread for all launches of a session.
    func trace(
        _ request: TraceRequest, planForImage: (String) -> ImagePlan?, control: TraceControl
    ) throws(TracerError) -> TraceResult
}
