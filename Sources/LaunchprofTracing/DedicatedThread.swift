import CLaunchprof
import LaunchprofELF

/// A thread for the tracer or the run monitor: a `WorkerThread` that saves launchprof's CPU mask
/// and can pin itself to one CPU.
///
/// The tracer needs one because ptrace has thread affinity: only the thread that spawned (and so
/// traces) a child may issue requests for it, and only that thread's wait sees its stops. A
/// session therefore runs all its launches on one such thread, optionally pinned to one CPU so
/// that each stop is a same-CPU context switch rather than a cross-CPU wake-up. The run monitor
/// (hook channel, output, deadlines) uses another, so neither blocks the other.
public final class DedicatedThread<Result: Sendable>: WorkerThread<Result>, @unchecked Sendable {
    /// Starts `body` on a new thread; `pinnedCPU` pins that thread to one CPU.
    public init(pinnedCPU: Int32? = nil, _ body: @escaping @Sendable () -> Result) {
        super.init(prologue: {
            lp_affinity_save()
            if let pinnedCPU { _ = lp_pin(0, pinnedCPU) }
        }, body)
    }

    /// The CPU the calling thread is running on (a good one to pin to).
    public static var currentCPU: Int32 { lp_current_cpu() }
}
