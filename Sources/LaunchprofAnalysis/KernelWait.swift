import LaunchprofReport

/// What a thread left the CPU for, from `sched_switch`'s `prev_state` and the kernel stack at
/// the switch (function names, innermost first). The stack is what tells a futex wait from a
/// poll and a page read from a kernel lock: the state bits alone say only "interruptible" or not.
public struct KernelWait: Sendable, Equatable {
    public var state: ThreadState
    /// The system call it waited in (`poll`, `futex`, `read`), or "page fault", or the kernel
    /// function that waited; nil when preempted or without a stack.
    public var blockedIn: String?
    /// A wait inside a page fault (the file is the faulting address's).
    public var inPageFault: Bool
    /// A wait that a timer ends when nothing else does (a sleep, a timeout).
    public var timed: Bool
    /// The thread exited (`X`, `Z`): nothing follows.
    public var exited: Bool

    public init(state: ThreadState, blockedIn: String? = nil, inPageFault: Bool = false, timed: Bool = false, exited: Bool = false) {
        self.state = state
        self.blockedIn = blockedIn
        self.inPageFault = inPageFault
        self.timed = timed
        self.exited = exited
    }

    /// `prev_state`'s bits (TASK_REPORT): the first eight are S D T t X Z P I; 0 and 0x100
    /// (`R+`) are a task preempted or yielding, still runnable.
    public static func classify(previousState: UInt64, stack: [String]?) -> KernelWait {
        let bits = previousState & 0xff
        let frames = stack ?? []
        let blockedIn = Self.blockedIn(frames)
        let inPageFault = frames.contains { Self.faultFrames.contains($0) }
        let timed = frames.contains { Self.timedFrames.contains($0) }
        func has(_ names: Set<String>) -> Bool { frames.contains { names.contains($0) } }
        if bits == 0 { return KernelWait(state: .runnable) }
        if bits & 0x30 != 0 { return KernelWait(state: .other, exited: true) }
        if bits & 0x08 != 0 { return KernelWait(state: .traced, blockedIn: blockedIn ?? "ptrace stop") }
        if has(Self.launchprofStopFrames) { return KernelWait(state: .traced, blockedIn: blockedIn) }
        if bits & 0x01 != 0 {
            if has(Self.futexFrames) { return KernelWait(state: .lock, blockedIn: blockedIn ?? "futex", timed: timed) }
            return KernelWait(state: .sleeping, blockedIn: blockedIn, inPageFault: inPageFault, timed: timed)
        }
        if bits & 0x02 != 0, has(Self.ioFrames) {
            return KernelWait(state: .diskIO, blockedIn: blockedIn, inPageFault: inPageFault)
        }
        return KernelWait(state: .other, blockedIn: blockedIn, inPageFault: inPageFault, timed: timed)
    }

    /// Where the thread waited: the system call whose entry function is on the stack, "page
    /// fault" for a fault, else the first function past the scheduler's own.
    static func blockedIn(_ frames: [String]) -> String? {
        for frame in frames {
            for prefix in ["__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__se_sys_", "__do_sys_"] where frame.hasPrefix(prefix) {
                return String(frame.dropFirst(prefix.count))
            }
        }
        if frames.contains(where: { faultFrames.contains($0) }) { return "page fault" }
        return frames.first { frame in
            !frame.hasPrefix("__schedule") && !frame.hasPrefix("schedule") && !frame.hasPrefix("io_schedule")
                && !frame.hasPrefix("preempt_schedule") && frame != "__traceiter_sched_switch"
        }
    }

    /// A futex wait, whatever the kernel's version calls its functions.
    static let futexFrames: Set<String> = [
        "futex_wait_queue", "futex_wait_queue_me", "futex_do_wait", "__futex_wait", "futex_wait",
        "futex_wait_requeue_pi", "futex_lock_pi", "rt_mutex_wait_proxy_lock", "futex_wait_multiple",
    ]
    /// An I/O wait: the kernel marks them by scheduling through `io_schedule`.
    static let ioFrames: Set<String> = ["io_schedule", "io_schedule_timeout", "bit_wait_io", "bit_wait_io_timeout"]
    /// A page fault's path.
    static let faultFrames: Set<String> = ["exc_page_fault", "asm_exc_page_fault", "handle_mm_fault", "do_user_addr_fault"]
    /// Sleeps with a deadline: a timer wakes them.
    static let timedFrames: Set<String> = [
        "do_nanosleep", "hrtimer_nanosleep", "schedule_hrtimeout_range", "schedule_hrtimeout_range_clock",
        "schedule_hrtimeout", "schedule_timeout", "usleep_range_state", "msleep", "do_sys_poll", "do_select",
        "ep_poll", "futex_wait",
    ]
    /// Stops launchprof causes: ptrace's, and its cgroup freezer's (`--resume-cycles`, prewarm).
    static let launchprofStopFrames: Set<String> = ["ptrace_stop", "do_freezer_trap", "__refrigerator"]
}
