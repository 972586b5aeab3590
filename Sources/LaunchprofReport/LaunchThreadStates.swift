/// Why a launch took as long as it did: the main thread's time from the spawn to readiness by
/// thread state, from the kernel's scheduler events, with what caused each wait and the reasons
/// that stand out. Each phase carries its own split (`LaunchPhase.threadState`).
public struct LaunchThreadStates: Sendable, Equatable, Codable {
    /// The main thread's id (the child's pid). Before the child existed (the spawn's first
    /// microseconds) the launch's main thread was launchprof's spawning thread.
    public var mainThread: Int32
    /// Where the launch ends, in ns from the spawn: the first frame or the readiness point, else
    /// the exit.
    public var launchEndNs: UInt64
    /// The main thread from the spawn to `launchEndNs`; a prewarmed launch's hold
    /// (`PrewarmRun.holdRange`, frozen by launchprof) is left out, here, in the timeline and in
    /// the other threads' summaries: its states add up to `launchEndNs` minus the hold.
    public var launch: ThreadStateBreakdown
    /// The main thread's states in time order over the launch, adjacent spans of one state
    /// merged (the trace's thread-state track).
    public var timeline: [ThreadStateSpan]
    /// The process's other threads over the launch, by thread id.
    public var threads: [ThreadStateSummary]
    /// The tasks that ran on the main thread's CPU while it was runnable, most time first (at
    /// most 3; the process's own threads and launchprof included).
    public var cpuCompetitors: [TaskTime]
    /// What ended the main thread's waits, most time waited first: a thread of some process
    /// (the X server, the compositor, dbus-daemon, one of the app's threads), a timer or an
    /// interrupt.
    public var wakers: [WakeCause]
    /// Files whose pages the main thread waited to read (page cache misses and major faults),
    /// most time first.
    public var fileReads: [FileRead]
    /// The threads that released the futexes the main thread waited on, most time first.
    public var lockHolders: [LockHolder]
    /// The slow-launch reasons raised, most time first (`SlowLaunchReason`).
    public var reasons: [SlowLaunchReason]
    /// What limits the figures, when something does ("kernel stacks unreadable: …").
    public var notes: [String]

    public init(
        mainThread: Int32, launchEndNs: UInt64, launch: ThreadStateBreakdown, timeline: [ThreadStateSpan] = [],
        threads: [ThreadStateSummary] = [], cpuCompetitors: [TaskTime] = [], wakers: [WakeCause] = [],
        fileReads: [FileRead] = [], lockHolders: [LockHolder] = [], reasons: [SlowLaunchReason] = [],
        notes: [String] = []
    ) {
        self.mainThread = mainThread
        self.launchEndNs = launchEndNs
        self.launch = launch
        self.timeline = timeline
        self.threads = threads
        self.cpuCompetitors = cpuCompetitors
        self.wakers = wakers
        self.fileReads = fileReads
        self.lockHolders = lockHolders
        self.reasons = reasons
        self.notes = notes
    }
}

/// One span of the main thread's timeline, in ns from the spawn.
public struct ThreadStateSpan: Sendable, Equatable, Hashable, Codable {
    public var startNs: UInt64
    public var durationNs: UInt64
    public var state: ThreadState
    /// Where it waited: the system call (`poll`, `futex`) or kernel function (`filemap_fault`)
    /// of a wait's kernel stack.
    public var blockedIn: String?
    /// Who ended the wait ("Xvfb 812", "timer", "interrupt").
    public var wakedBy: String?

    public init(startNs: UInt64, durationNs: UInt64, state: ThreadState, blockedIn: String? = nil, wakedBy: String? = nil) {
        self.startNs = startNs
        self.durationNs = durationNs
        self.state = state
        self.blockedIn = blockedIn
        self.wakedBy = wakedBy
    }

    public var endNs: UInt64 { startNs + durationNs }
}

/// A task as the scheduler names it: its thread and its process.
public struct TaskName: Sendable, Equatable, Hashable, Codable {
    /// The process id (thread group) and its name; nil when the scheduler events did not say.
    public var pid: Int32?
    public var process: String?
    public var tid: Int32
    /// The thread's name (its `comm`).
    public var thread: String

    public init(pid: Int32?, process: String?, tid: Int32, thread: String) {
        self.pid = pid
        self.process = process
        self.tid = tid
        self.thread = thread
    }

    /// "Xvfb 812", "gnome-calculator 4410 thread gdbus 4415", "swapper (idle)".
    public var text: String {
        if tid == 0 { return "idle" }
        guard let pid, let process else { return "\(thread) \(tid)" }
        if pid == tid { return "\(process) \(pid)" }
        return "\(process) \(pid) thread \(thread) \(tid)"
    }
}

/// A task and its time.
public struct TaskTime: Sendable, Equatable, Hashable, Codable {
    public var task: TaskName
    public var ns: UInt64
    /// It is one of the launched process's own threads.
    public var ownProcess: Bool
    /// It is launchprof itself.
    public var launchprof: Bool

    public init(task: TaskName, ns: UInt64, ownProcess: Bool = false, launchprof: Bool = false) {
        self.task = task
        self.ns = ns
        self.ownProcess = ownProcess
        self.launchprof = launchprof
    }
}

/// What ended a kind of wait of the main thread, and how long those waits were.
public struct WakeCause: Sendable, Equatable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable, Hashable {
        /// A thread woke it: the server that answered, the thread that posted the event.
        case thread
        /// A timer expired (a sleep's or a timeout's).
        case timer
        /// An interrupt (a device's completion, another CPU's softirq): the task it interrupted
        /// is not the cause.
        case interrupt
        /// No wake-up was seen (the events did not cover it).
        case unknown
    }

    public var kind: Kind
    /// The waking thread (`thread`).
    public var task: TaskName?
    /// The state the main thread was woken from.
    public var state: ThreadState
    /// Time in those waits (switch-out to wake-up) and how many there were.
    public var ns: UInt64
    public var count: Int
    /// It is one of the launched process's own threads / launchprof itself.
    public var ownProcess: Bool
    public var launchprof: Bool

    public init(
        kind: Kind, task: TaskName? = nil, state: ThreadState, ns: UInt64, count: Int, ownProcess: Bool = false,
        launchprof: Bool = false
    ) {
        self.kind = kind
        self.task = task
        self.state = state
        self.ns = ns
        self.count = count
        self.ownProcess = ownProcess
        self.launchprof = launchprof
    }

    /// "Xvfb 812", "a timer", "an interrupt".
    public var wakerText: String {
        switch kind {
        case .thread: task?.text ?? "a thread"
        case .timer: "a timer"
        case .interrupt: "an interrupt"
        case .unknown: "an unseen wake-up"
        }
    }
}

/// A file the main thread waited to read from disk.
public struct FileRead: Sendable, Equatable, Hashable, Codable {
    /// The file's path; for a file launchprof could not name, "device M:m inode N".
    public var path: String
    /// The main thread's disk I/O waits attributed to it.
    public var waitNs: UInt64
    /// The process's major faults on the file's mappings (pages read from disk through a fault)
    /// and the pages the process's reads added to the page cache.
    public var majorFaults: Int
    public var pagesRead: Int

    public init(path: String, waitNs: UInt64, majorFaults: Int, pagesRead: Int) {
        self.path = path
        self.waitNs = waitNs
        self.majorFaults = majorFaults
        self.pagesRead = pagesRead
    }
}

/// Futex waits of the main thread ended by one thread: the lock's holder as it released it.
public struct LockHolder: Sendable, Equatable, Hashable, Codable {
    public var task: TaskName
    public var ns: UInt64
    public var count: Int
    public var ownProcess: Bool

    public init(task: TaskName, ns: UInt64, count: Int, ownProcess: Bool) {
        self.task = task
        self.ns = ns
        self.count = count
        self.ownProcess = ownProcess
    }
}

/// A thread of the process other than the main one, over the launch.
public struct ThreadStateSummary: Sendable, Equatable, Hashable, Codable {
    public var tid: Int32
    public var name: String
    /// Its life within the launch, in ns from the spawn.
    public var startNs: UInt64
    public var endNs: UInt64
    public var states: ThreadStateBreakdown

    public init(tid: Int32, name: String, startNs: UInt64, endNs: UInt64, states: ThreadStateBreakdown) {
        self.tid = tid
        self.name = name
        self.startNs = startNs
        self.endNs = endNs
        self.states = states
    }
}

/// A cause of a slow launch that passed its threshold, with what to do about it.
public struct SlowLaunchReason: Sendable, Equatable, Hashable, Codable {
    public enum Code: String, Sendable, Codable, CaseIterable, Hashable {
        /// The main thread waited for a CPU.
        case cpuContention
        /// It waited for pages of files to be read from disk.
        case diskIO
        /// It waited on a lock another thread held.
        case lockContention
        /// It waited for the X server or a Wayland compositor.
        case displayServer
        /// It waited for D-Bus (dbus-daemon, dbus-broker, or the app's gdbus thread).
        case dbus
        /// It waited for another process.
        case otherProcess
        /// It waited for one of the app's own threads (not a lock).
        case ownThread
        /// It slept on timers (sleeps, timeouts).
        case timer
        /// It was in other uninterruptible waits.
        case uninterruptible
        /// launchprof held it stopped.
        case launchprof
        /// It ran on a CPU most of the launch: the launch is the app's own work.
        case cpuBound
    }

    public var code: Code
    /// "main thread runnable 31% of the launch: CPU contention (cc1plus 42 ms)".
    public var message: String
    public var ns: UInt64
    /// The share of the launch, in percent (rounded down).
    public var percentOfLaunch: Int
    /// The rule that raised it ("≥ 15% of the launch and ≥ 1 ms").
    public var threshold: String
    public var advice: String
    /// The phase holding most of it.
    public var phase: String?

    public init(
        code: Code, message: String, ns: UInt64, percentOfLaunch: Int, threshold: String, advice: String,
        phase: String? = nil
    ) {
        self.code = code
        self.message = message
        self.ns = ns
        self.percentOfLaunch = percentOfLaunch
        self.threshold = threshold
        self.advice = advice
        self.phase = phase
    }
}
