import CLaunchprof
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Lets another thread end a traced launch: readiness reached, a timeout, an output match.
/// Ending a process is an ordinary `kill(2)`, which any thread may send; the tracer thread sees
/// the death in its wait loop and reports it as launchprof's doing.
public final class TraceControl: Sendable {
    private struct State {
        var pid: pid_t = 0
        var exited = false
        var termination: (signal: Int32, reason: String)?
        /// When launchprof first asked the child to end: nothing it does afterwards is launch time.
        var terminationRequestedAt: UInt64?
        var readinessListener: (@Sendable (UInt64) -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// Sends `signal` to the traced child (SIGTERM first, SIGKILL to insist) and remembers why.
    /// Does nothing once the child has exited. A request before the spawn (a timeout that passed
    /// while a loaded machine was still arming probes or forking) is kept and sent at `attach`:
    /// dropping it let the child run on past its timeout.
    public func terminate(signal: Int32, reason: String) {
        state.withLock { state in
            guard !state.exited else { return }
            if state.termination == nil || signal == SIGKILL {
                state.termination = (signal, reason)
            }
            if state.terminationRequestedAt == nil { state.terminationRequestedAt = lp_now_ns() }
            if state.pid > 0 { kill(state.pid, signal) }
        }
    }

    /// The traced child's pid (0 before the spawn).
    public var pid: Int32 { state.withLock { $0.pid } }

    /// Sends `signal` to the traced child without ending the launch (lifecycle signals).
    public func send(signal: Int32) {
        state.withLock { state in
            guard state.pid > 0, !state.exited else { return }
            kill(state.pid, signal)
        }
    }

    /// Called (on the tracer's thread) when the tracer itself sees readiness: a listening socket.
    public func onReady(_ listener: @escaping @Sendable (UInt64) -> Void) {
        state.withLock { $0.readinessListener = listener }
    }

    func reportReady(at time: UInt64) {
        let listener = state.withLock { $0.readinessListener }
        listener?(time)
    }

    /// Why launchprof ended the child, if it did.
    var termination: (signal: Int32, reason: String)? { state.withLock { $0.termination } }

    /// When launchprof first asked the child to end (CLOCK_MONOTONIC ns), if it did.
    var terminationRequestedAt: UInt64? { state.withLock { $0.terminationRequestedAt } }

    func attach(_ pid: pid_t) {
        state.withLock { state in
            state.pid = pid
            if let termination = state.termination { kill(pid, termination.signal) }
        }
    }
    func markExited() { state.withLock { $0.exited = true } }
}
