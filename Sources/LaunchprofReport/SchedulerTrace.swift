/// The kernel's scheduler events around one launch, decoded: what thread states are computed
/// from (LaunchprofAnalysis's `ThreadStateAnalyzer`). Times are CLOCK_MONOTONIC ns, ids are the
/// kernel's (a thread id is `tid`, its process `pid`).
public struct SchedulerTrace: Sendable, Equatable {
    /// Every context switch on every CPU, in time order.
    public var switches: [Switch]
    /// Wake-ups of launchprof's followed tasks (the launch's threads, and any task created
    /// after the events were enabled), in time order.
    public var wakeups: [Wakeup]
    /// New tasks made runnable for the first time (fork, clone), in time order.
    public var newTasks: [Wakeup]
    /// The followed tasks' switch-outs (launchprof's spawning thread and every task it
    /// created), each with its kernel stack, in time order. The same switches are among
    /// `switches`, with times that may differ by the few ns between two events' clock reads.
    public var followedSwitchOuts: [StackedSwitch]
    /// The followed tasks' switch-ins, from perf's own context-switch records: they do not
    /// depend on the tracepoint's record of the task switching out, which a kernel may hide.
    public var followedSwitchIns: [SwitchIn]
    /// Stacks by index (`StackedSwitch.stack`): kernel function names, innermost first.
    public var stacks: [[String]]
    /// The followed tasks' major page faults.
    public var majorFaults: [MajorFault]
    /// The followed tasks' file mappings (for naming the files of faults and page reads).
    public var mappings: [FileMapping]
    /// Pages the followed tasks added to the page cache (reads from disk).
    public var pageCacheAdds: [PageCacheAdd]
    /// Files launchprof knows by device and inode (the program's closure, files it was told
    /// of), for reads of files the process did not map.
    public var knownFiles: [FileIdentity: String]
    /// Records the kernel dropped (its buffer was full).
    public var lostRecords: UInt64
    /// The ids of launchprof's own process and of its thread that spawned the child.
    public var launchprofPID: Int32
    public var spawningThread: Int32
    /// Wake-ups were recorded only for tasks whose id is above this one (a kernel filter that
    /// keeps the volume down); a thread at or below it (ids wrapped around) has none.
    public var wakeupsAbove: Int32

    public init(
        switches: [Switch] = [], wakeups: [Wakeup] = [], newTasks: [Wakeup] = [],
        followedSwitchOuts: [StackedSwitch] = [], followedSwitchIns: [SwitchIn] = [], stacks: [[String]] = [], majorFaults: [MajorFault] = [],
        mappings: [FileMapping] = [], pageCacheAdds: [PageCacheAdd] = [], knownFiles: [FileIdentity: String] = [:],
        lostRecords: UInt64 = 0,
        launchprofPID: Int32 = 0, spawningThread: Int32 = 0, wakeupsAbove: Int32 = 0
    ) {
        self.switches = switches
        self.wakeups = wakeups
        self.newTasks = newTasks
        self.followedSwitchOuts = followedSwitchOuts
        self.followedSwitchIns = followedSwitchIns
        self.stacks = stacks
        self.majorFaults = majorFaults
        self.mappings = mappings
        self.pageCacheAdds = pageCacheAdds
        self.knownFiles = knownFiles
        self.lostRecords = lostRecords
        self.launchprofPID = launchprofPID
        self.spawningThread = spawningThread
        self.wakeupsAbove = wakeupsAbove
    }

    /// A `sched_switch`: on `cpu` at `timeNs`, `previous` left the CPU in `previousState` and
    /// `next` got it. `previousPID` is the process of `previous` (the sample's; nil when the
    /// record did not carry it).
    public struct Switch: Sendable, Equatable {
        public var timeNs: UInt64
        public var cpu: Int32
        public var previousTID: Int32
        public var previousPID: Int32?
        public var previousName: String
        /// The kernel's `prev_state` bits: 0 or 0x100 runnable (preempted), 0x1 S, 0x2 D, 0x4 T,
        /// 0x8 t, 0x10 X, 0x20 Z, 0x40 P, 0x80 I.
        public var previousState: UInt64
        public var nextTID: Int32
        public var nextName: String

        public init(
            timeNs: UInt64, cpu: Int32, previousTID: Int32, previousPID: Int32?, previousName: String,
            previousState: UInt64, nextTID: Int32, nextName: String
        ) {
            self.timeNs = timeNs
            self.cpu = cpu
            self.previousTID = previousTID
            self.previousPID = previousPID
            self.previousName = previousName
            self.previousState = previousState
            self.nextTID = nextTID
            self.nextName = nextName
        }
    }

    /// A `sched_waking` (or `sched_wakeup_new`): `waker` (thread `wakerTID` of process
    /// `wakerPID`, the task on the CPU) woke `wakee`; `inInterrupt` when the CPU was in a hard
    /// or soft interrupt (the task on the CPU is then not the cause).
    public struct Wakeup: Sendable, Equatable {
        public var timeNs: UInt64
        public var cpu: Int32
        public var wakerPID: Int32
        public var wakerTID: Int32
        public var inInterrupt: Bool
        public var wakeeTID: Int32
        public var wakeeName: String

        public init(
            timeNs: UInt64, cpu: Int32, wakerPID: Int32, wakerTID: Int32, inInterrupt: Bool, wakeeTID: Int32,
            wakeeName: String
        ) {
            self.timeNs = timeNs
            self.cpu = cpu
            self.wakerPID = wakerPID
            self.wakerTID = wakerTID
            self.inInterrupt = inInterrupt
            self.wakeeTID = wakeeTID
            self.wakeeName = wakeeName
        }
    }

    /// A followed task got a CPU.
    public struct SwitchIn: Sendable, Equatable {
        public var timeNs: UInt64
        public var cpu: Int32
        public var tid: Int32

        public init(timeNs: UInt64, cpu: Int32, tid: Int32) {
            self.timeNs = timeNs
            self.cpu = cpu
            self.tid = tid
        }
    }

    /// A switch-out with the index of its kernel stack in `stacks` (nil: none was recorded, or
    /// the kernel's symbols were unreadable).
    public struct StackedSwitch: Sendable, Equatable {
        public var record: Switch
        public var stack: Int?

        public init(record: Switch, stack: Int?) {
            self.record = record
            self.stack = stack
        }
    }

    public struct MajorFault: Sendable, Equatable {
        public var timeNs: UInt64
        public var pid: Int32
        public var tid: Int32
        public var address: UInt64

        public init(timeNs: UInt64, pid: Int32, tid: Int32, address: UInt64) {
            self.timeNs = timeNs
            self.pid = pid
            self.tid = tid
            self.address = address
        }
    }

    /// A file mapped into process `pid` at `start` for `length` bytes (device and inode of the
    /// file).
    public struct FileMapping: Sendable, Equatable {
        public var timeNs: UInt64
        public var pid: Int32
        public var start: UInt64
        public var length: UInt64
        public var device: FileDevice
        public var inode: UInt64
        public var path: String

        public init(timeNs: UInt64, pid: Int32, start: UInt64, length: UInt64, device: FileDevice, inode: UInt64, path: String) {
            self.timeNs = timeNs
            self.pid = pid
            self.start = start
            self.length = length
            self.device = device
            self.inode = inode
            self.path = path
        }
    }

    /// `pages` pages of the file (device, inode) added to the page cache by thread `tid`.
    public struct PageCacheAdd: Sendable, Equatable {
        public var timeNs: UInt64
        public var tid: Int32
        public var device: FileDevice
        public var inode: UInt64
        public var pages: Int

        public init(timeNs: UInt64, tid: Int32, device: FileDevice, inode: UInt64, pages: Int) {
            self.timeNs = timeNs
            self.tid = tid
            self.device = device
            self.inode = inode
            self.pages = pages
        }
    }

    /// A file by device and inode.
    public struct FileIdentity: Sendable, Hashable {
        public var device: FileDevice
        public var inode: UInt64

        public init(device: FileDevice, inode: UInt64) {
            self.device = device
            self.inode = inode
        }
    }

    /// A device number as major and minor.
    public struct FileDevice: Sendable, Hashable {
        public var major: UInt32
        public var minor: UInt32

        public init(major: UInt32, minor: UInt32) {
            self.major = major
            self.minor = minor
        }
    }
}
