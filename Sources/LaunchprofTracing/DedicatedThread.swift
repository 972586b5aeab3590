import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// A pthread of launchprof's own, started and joined explicitly.
///
/// The tracer needs one because ptrace has thread affinity: only the thread that spawned (and so
/// traces) a child may issue requests for it, and only that thread's wait sees its stops. A
/// session therefore runs all its launches on one such thread, optionally pinned to one CPU so
/// that each stop is a same-CPU context switch rather than a cross-CPU wake-up. The run monitor
/// (hook channel, output, deadlines) uses another, so neither blocks the other.
public final class DedicatedThread<Result: Sendable>: ThreadEntry, @unchecked Sendable {
    // Written once by the thread before it ends; read only after pthread_join.
    private var result: Result?
    private let body: @Sendable () -> Result
    private let cpu: Int32?
    private var thread = pthread_t()
    private var started = false

    /// Starts `body` on a new thread; `pinnedCPU` pins that thread to one CPU.
    public init(pinnedCPU: Int32? = nil, _ body: @escaping @Sendable () -> Result) {
        self.body = body
        self.cpu = pinnedCPU
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        // Swift code on this thread can recurse (JSON, regex): give it a main-thread-sized stack.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        super.init()
        let context = Unmanaged<ThreadEntry>.passRetained(self).toOpaque()
        started = pthread_create(&thread, &attributes, { context in
            Unmanaged<ThreadEntry>.fromOpaque(context!).takeRetainedValue().main()
            return nil
        }, context) == 0
        pthread_attr_destroy(&attributes)
        if !started {
            Unmanaged<ThreadEntry>.fromOpaque(context).release()
        }
    }

    override func main() {
        lp_affinity_save()
        if let cpu { _ = lp_pin(0, cpu) }
        result = body()
    }

    /// Waits for the thread and returns what it produced. If no thread could be created, runs
    /// the body on the calling thread instead.
    public func join() -> Result {
        if started {
            pthread_join(thread, nil)
            started = false
        } else if result == nil {
            result = body()
        }
        return result!
    }

    /// The CPU the calling thread is running on (a good one to pin to).
    public static var currentCPU: Int32 { lp_current_cpu() }
}

/// The non-generic entry point a C thread-start function can call.
public class ThreadEntry {
    func main() {}
}
