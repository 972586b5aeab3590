import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// A pthread of launchprof's own that runs one body and hands back its result: the thread helper
/// of every module (the tracer, the run monitor, display observers, ring-buffer drains, inspect's
/// scanners). Started at init, joined explicitly.
///
/// A raw thread, not Dispatch: Dispatch's first use costs ~130 µs and 0.4 ms of process start-up,
/// more than `inspect` gains from a second CPU on small closures. The tracer needs one of its
/// own anyway: ptrace has thread affinity (only the thread that spawned, and so traces, a child
/// may issue requests for it, and only that thread's wait sees its stops), so a session runs all
/// its launches on one such thread.
public final class DedicatedThread<Result: Sendable>: @unchecked Sendable {
    /// Where the thread runs.
    public enum Placement: Sendable {
        /// Wherever its creator may run.
        case inherited
        /// Off the CPU its creator runs on (when another is allowed), for work beside the
        /// creator's: a new thread starts on its creator's CPU and, while the creator keeps that
        /// CPU busy, waits there for a time slice (0.6–0.9 ms in 9 of 10 one-shot starts on a
        /// 2-vCPU VM) instead of starting in ~70 µs on an idle one.
        case offCurrentCPU
        /// On one CPU, so that each stop of a child traced from it is a same-CPU context switch
        /// rather than a cross-CPU wake-up. The mask it had before is kept as launchprof's own
        /// (`lp_affinity_save`), the one its children are given back.
        case pinned(Int32)
    }

    // Written once by the thread before it ends; read only after pthread_join.
    private var result: Result?
    private let body: @Sendable () -> Result
    private var thread = pthread_t()
    private var started = false
    private var detached = false
    /// The CPU the thread is kept off (its creator's when it was started), if it is.
    public private(set) var keptOffCPU: Int32?

    /// Starts `body` on a new thread placed as `placement` says.
    public init(_ placement: Placement = .inherited, _ body: @escaping @Sendable () -> Result) {
        self.body = body
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        // Swift code on this thread can recurse (JSON, regex): give it a main-thread-sized stack.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        var pinnedCPU: Int32?
        switch placement {
        case .inherited: break
        case .offCurrentCPU:
            let cpu = lp_thread_attr_other_cpu(&attributes)
            keptOffCPU = cpu >= 0 ? cpu : nil
        case .pinned(let cpu): pinnedCPU = cpu
        }
        let start = Unmanaged.passRetained(ThreadStart { [self] in
            if let pinnedCPU {
                lp_affinity_save()
                _ = lp_pin(0, pinnedCPU)
            }
            result = body()
        }).toOpaque()
        started = pthread_create(&thread, &attributes, { context in
            Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, start) == 0
        pthread_attr_destroy(&attributes)
        if !started {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
        }
    }

    /// Convenience for the tracer: pinned to `pinnedCPU` when there is one.
    public convenience init(pinnedCPU: Int32?, _ body: @escaping @Sendable () -> Result) {
        self.init(pinnedCPU.map { .pinned($0) } ?? .inherited, body)
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
    /// the body on the calling thread instead (unpinned: pinning would pin the caller).
    @discardableResult
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

    /// The CPU the calling thread is running on (a good one to pin to).
    public static var currentCPU: Int32 { lp_current_cpu() }
}

/// What a C thread-start function can call: not generic.
private final class ThreadStart {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
