import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// A pthread of launchprof's own that runs one body and hands back its result, started at
/// init and joined explicitly. A raw thread, not Dispatch: its first use costs ~130 µs and
/// 0.4 ms of process start-up, more than `inspect` gains from a second CPU on small closures.
open class WorkerThread<Result: Sendable>: ThreadEntry, @unchecked Sendable {
    // Written once by the thread before it ends; read only after pthread_join.
    private var result: Result?
    private let body: @Sendable () -> Result
    private let prologue: (@Sendable () -> Void)?
    private var thread = pthread_t()
    private var started = false
    private var detached = false
    /// The CPU the thread is kept off (its creator's when it was started), if it is.
    public private(set) var keptOffCPU: Int32?

    /// Starts `body` on a new thread, after `prologue` (thread set-up, such as pinning).
    /// `offCurrentCPU`: keep the thread off the CPU the caller runs on (when another is allowed),
    /// for work that runs beside the caller's.
    public init(
        offCurrentCPU: Bool = false, prologue: (@Sendable () -> Void)? = nil, _ body: @escaping @Sendable () -> Result
    ) {
        self.body = body
        self.prologue = prologue
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        // Swift code on this thread can recurse (JSON, regex): give it a main-thread-sized stack.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        if offCurrentCPU {
            // A new thread starts on its creator's CPU: while the creator keeps that CPU busy it
            // waits there for a time slice (0.6–0.9 ms in 9 of 10 one-shot starts on a 2-vCPU
            // VM) instead of starting in ~70 µs on an idle one.
            let cpu = lp_thread_attr_other_cpu(&attributes)
            keptOffCPU = cpu >= 0 ? cpu : nil
        }
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

    /// On the new thread: the prologue, then the body.
    override func main() {
        prologue?()
        result = body()
    }

    /// Whether the body runs on a thread of its own (else `join` runs it on the caller's).
    public var isRunning: Bool { started }

    /// Lets a thread whose result is not needed end on its own: its end (glibc returns the
    /// unused part of its stack to the kernel, a TLB flush on every CPU of the process) is then
    /// not waited for. Without a thread of its own, the body is not run.
    public func detach() {
        if started {
            pthread_detach(thread)
            started = false
        }
        detached = true
    }

    /// Waits for the thread and returns what it produced. If no thread could be created, runs
    /// the body on the calling thread instead (without the prologue: it set up the thread).
    public func join() -> Result {
        precondition(!detached, "a detached thread's result is not kept")
        if started {
            pthread_join(thread, nil)
            started = false
        } else if result == nil {
            result = body()
        }
        return result!
    }
}

/// The non-generic entry point a C thread-start function can call.
open class ThreadEntry {
    func main() {}
}
