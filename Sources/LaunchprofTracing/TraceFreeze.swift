/// Prewarm: where the tracer holds the child frozen, and who decides when it resumes.
///
/// The child is held in the ptrace stop the tracer already has at that point: a stopped tracee
/// is off every run queue (it uses no CPU), its tracer dying kills it (PTRACE_O_EXITKILL), and the
/// resume is the PTRACE_CONT the tracer would send anyway, with the breakpoints already removed.
public struct TraceFreeze: Sendable {
    public enum Point: Sendable, Equatable {
        /// The entry of `main`, before any of the app's own work (the tracer's main breakpoint).
        case main
        /// The child's own SIGSTOP after `main` (the hooks raise it before the app's first
        /// phase when `LAUNCHPROF_FREEZE_AT` asks): the stop is held, the signal suppressed.
        case selfStop
    }

    public var point: Point
    /// Called on the tracer's thread while the child is held stopped; the child resumes when it
    /// returns. Arguments: the child's pid, its spawn and its stop (CLOCK_MONOTONIC ns).
    public var hold: @Sendable (_ pid: Int32, _ spawnedAtNs: UInt64, _ stoppedAtNs: UInt64) -> Void

    public init(point: Point, hold: @escaping @Sendable (Int32, UInt64, UInt64) -> Void) {
        self.point = point
        self.hold = hold
    }
}
