/// What a thread was doing at an instant, as the scheduler saw it: on a CPU, waiting for one, or
/// waiting for something else, with the wait told apart by its kernel stack.
public enum ThreadState: String, Sendable, Codable, CaseIterable, Hashable {
    /// On a CPU.
    case running
    /// Ready, waiting for a CPU: preempted, or woken and not yet run.
    case runnable
    /// An interruptible wait other than a lock: poll, nanosleep, a read of a pipe or socket.
    case sleeping
    /// A futex wait (a mutex, a condition variable, a semaphore).
    case lock
    /// An uninterruptible wait on I/O (`io_schedule`): a read of a file's pages, a major fault.
    case diskIO
    /// Any other uninterruptible wait (a kernel lock, the mmap lock), a stop launchprof did not
    /// cause, a parked or idle kernel state.
    case other
    /// Stopped by launchprof itself: a ptrace stop, or frozen by its cgroup freezer.
    case traced

    /// How people read it ("disk I/O"), in the waterfall's legend and the reasons.
    public var label: String {
        switch self {
        case .running: "running"
        case .runnable: "runnable"
        case .sleeping: "sleeping"
        case .lock: "lock"
        case .diskIO: "disk I/O"
        case .other: "uninterruptible"
        case .traced: "stopped by launchprof"
        }
    }
}

/// A span of time split by thread state: every nanosecond in exactly one state, so the parts add
/// up to the span.
public struct ThreadStateBreakdown: Sendable, Equatable, Hashable, Codable {
    public var runningNs: UInt64
    public var runnableNs: UInt64
    public var sleepingNs: UInt64
    public var lockNs: UInt64
    public var diskIONs: UInt64
    public var otherNs: UInt64
    public var tracedNs: UInt64

    public init(
        runningNs: UInt64 = 0, runnableNs: UInt64 = 0, sleepingNs: UInt64 = 0, lockNs: UInt64 = 0,
        diskIONs: UInt64 = 0, otherNs: UInt64 = 0, tracedNs: UInt64 = 0
    ) {
        self.runningNs = runningNs
        self.runnableNs = runnableNs
        self.sleepingNs = sleepingNs
        self.lockNs = lockNs
        self.diskIONs = diskIONs
        self.otherNs = otherNs
        self.tracedNs = tracedNs
    }

    public subscript(state: ThreadState) -> UInt64 {
        get {
            switch state {
            case .running: runningNs
            case .runnable: runnableNs
            case .sleeping: sleepingNs
            case .lock: lockNs
            case .diskIO: diskIONs
            case .other: otherNs
            case .traced: tracedNs
            }
        }
        set {
            switch state {
            case .running: runningNs = newValue
            case .runnable: runnableNs = newValue
            case .sleeping: sleepingNs = newValue
            case .lock: lockNs = newValue
            case .diskIO: diskIONs = newValue
            case .other: otherNs = newValue
            case .traced: tracedNs = newValue
            }
        }
    }

    /// The span the parts cover.
    public var totalNs: UInt64 { ThreadState.allCases.reduce(0) { $0 &+ self[$1] } }

    /// The states with time in them, largest first (ties in `ThreadState` order).
    public var largestFirst: [(state: ThreadState, ns: UInt64)] {
        ThreadState.allCases.map { ($0, self[$0]) }.filter { $0.1 > 0 }
            .enumerated().sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }.map(\.element)
    }
}
