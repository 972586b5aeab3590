/// One observation the tracer made during a single launch.
///
/// This is the boundary between the tracer (which observes a real child process) and the pure
/// layers that turn observations into a timeline, metrics and reports. Every timestamp is an
/// absolute `CLOCK_MONOTONIC` reading in nanoseconds: the tracer's own clock for boundaries it
/// observed, the app's clock for hook events (the same clock, so the two compare directly).
public enum LaunchEvent: Sendable, Equatable, Codable {
    /// launchprof is about to create the child (taken just before fork).
    case spawned(atNs: UInt64)
    /// An `execve` completed: the first instruction of a new image (`image` counts from 0;
    /// a program that execs another produces image 1, 2, …).
    case imageStarted(image: Int, path: String, atNs: UInt64)
    /// The dynamic loader started relocating (mapping of the closure is complete).
    case relocationStarted(atNs: UInt64)
    /// The dynamic loader finished relocation (`r_debug.r_state == RT_CONSISTENT`).
    case relocationFinished(atNs: UInt64)
    /// The loader called the first initializer of a shared object (its DT_INIT or first
    /// DT_INIT_ARRAY entry). The object's initializers run until the next boundary.
    case objectInitStarted(path: String, atNs: UInt64)
    /// The loader transferred control to the program's entry point (AT_ENTRY).
    case entryReached(atNs: UInt64)
    /// libc called the program's first initializer (its first DT_PREINIT_ARRAY entry, else
    /// DT_INIT/`_init`, else its first DT_INIT_ARRAY entry).
    case programInitStarted(atNs: UInt64)
    /// `main` was entered.
    case mainReached(atNs: UInt64)
    /// A hook call from the app (see `HookEvent`).
    case hook(HookEvent)
    /// A display server saw a window of the program shown, or its first frame.
    case display(DisplayEvent)
    /// A span the runtime probes saw: a dlopen and its steps, a toolkit phase, a Python import.
    case probed(ProbedSpan)
    /// Readiness without hooks: a matching output line or the first listening socket.
    case ready(reason: String, atNs: UInt64)
    /// A boundary that cannot be observed for this program, and why (e.g. a static program has
    /// no loader phases). The timeline reports the phase as absent, never estimated.
    case unobservable(phase: String, reason: String)
    /// The kernel dropped `count` probe hits somewhere between `fromNs` and `toNs` (a full ring
    /// buffer), any of which may have been this launch's: a span a boundary hit dropped there
    /// could have ended earlier is reported absent, never measured long.
    case hitsLost(count: UInt64, fromNs: UInt64, toNs: UInt64)
    /// launchprof decided to end the child (a timeout, the launch complete, Ctrl-C): what the
    /// child does after `atNs` is not part of its launch, so no boundary, hook, readiness or
    /// frame stamped later is a metric.
    case endedByLaunchprof(reason: String, atNs: UInt64)
    /// The child (the traced process launchprof spawned) ended.
    case exited(ExitStatus, atNs: UInt64)
}

/// A call the app made through the launch hooks (`launchprof.h`, or the channel directly).
public struct HookEvent: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case begin, end
        case firstFrame = "first-frame"
        case extend
        case finishExtend = "finish-extend"
    }

    public var kind: Kind
    /// The phase name (begin/end) or task id (extend/finish-extend); empty for first-frame.
    public var name: String
    public var atNs: UInt64

    public init(kind: Kind, name: String, atNs: UInt64) {
        self.kind = kind
        self.name = name
        self.atNs = atNs
    }
}

/// How a process ended.
public enum ExitStatus: Sendable, Equatable, Codable {
    case exited(code: Int32)
    case signaled(signal: Int32, coreDumped: Bool)
    /// launchprof ended it (timeout, readiness reached, Ctrl-C) with this signal.
    case killedByLaunchprof(signal: Int32, reason: String)
    /// launchprof asked it to end and it exited with a status of its own: xterm answers SIGTERM
    /// with `exit(15)`. Its answer to being ended, not a failure of its launch.
    case exitedWhenEnded(code: Int32, reason: String)
}
