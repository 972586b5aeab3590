import LaunchprofReport
import LaunchprofTracing

/// One thing the monitor learnt about a process it did not start, typed: from the kernel's
/// tracepoints (forks, execs, exits, stop and continue signals), from its uprobes (a watched
/// program's launch boundaries and its hooks' USDT probes), or from a display server (a window of
/// a watched launch mapped or drawn). Times are CLOCK_MONOTONIC ns, the kernel's own.
public enum FieldEvent: Sendable, Equatable {
    /// `parent` (a process) created the process `child` (fork, vfork or clone without
    /// CLONE_THREAD).
    case forked(parent: Int32, child: Int32, atNs: UInt64)
    /// Process `pid` finished an `execve` of `filename` (as the caller named it: possibly a
    /// relative path); its first instruction runs next.
    case execed(pid: Int32, filename: String, atNs: UInt64)
    /// Process `pid` ended with this wait status (`exit` code in bits 8–15, or the fatal signal
    /// in bits 0–6 with the core-dump flag 0x80).
    case exited(pid: Int32, status: Int32, atNs: UInt64)
    /// A stop signal (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) was sent to `pid`.
    case stopped(pid: Int32, atNs: UInt64)
    /// SIGCONT was sent to `pid`: if it was stopped, it runs again.
    case continued(pid: Int32, atNs: UInt64)
    /// A launch boundary's uprobe hit in `pid`: in a watched program's own file (`program`, its
    /// index among the watched), or in a file every process may map (the loader, a library: nil).
    case boundary(pid: Int32, program: Int?, boundaries: [Boundary], atNs: UInt64)
    /// A hook's USDT probe fired in `pid` (the name as the kernel copied it, cut and cleaned).
    case hook(pid: Int32, HookEvent)
    /// `pid` reached the libc call `ExecCensus` marks (`--all`: every glibc process hits it once).
    case libcStarted(pid: Int32, atNs: UInt64)
    /// A display server showed a window of `pid` (or of a descendant of it), or its first frame.
    case display(pid: Int32, DisplayEvent)
    /// The display `pid` names was not watched when it was exec'd (first watched only then, or
    /// refused): a window it showed before `atNs` went unseen, so a clean exit is no first frame.
    case displayUnwatched(pid: Int32, reason: String, atNs: UInt64)

    public var pid: Int32 {
        switch self {
        case .forked(_, let child, _): child
        case .execed(let pid, _, _), .exited(let pid, _, _), .stopped(let pid, _), .continued(let pid, _),
            .boundary(let pid, _, _, _), .hook(let pid, _), .display(let pid, _), .displayUnwatched(let pid, _, _), .libcStarted(let pid, _):
            pid
        }
    }

    public var atNs: UInt64 {
        switch self {
        case .forked(_, _, let at), .execed(_, _, let at), .exited(_, _, let at), .stopped(_, let at),
            .continued(_, let at), .boundary(_, _, _, let at), .displayUnwatched(_, _, let at), .libcStarted(_, let at):
            at
        case .hook(_, let event): event.atNs
        case .display(_, let event): event.atNs
        }
    }
}
