import CLaunchprof
import LaunchprofSystem
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The run monitor's thread, made once per session. It sleeps in epoll on the current launch's
/// descriptors (hook channel, watched output, the monitor's wake pipe) and a timer at its
/// deadline, and runs the launch's watch only when one of them wakes it. Arming a launch is two
/// `epoll_ctl`s and a `timerfd_settime` on the tracer's thread, which wake nobody: a launch that
/// never needs the monitor (no hook line, no output to match, no deadline reached, as most short
/// launches) costs this thread no wake-up at all, and the tracer's thread makes the monitor's
/// last pass itself (`finishJob`). Handing it a job per run through a semaphore, and another
/// byte at the end, cost four context switches per launch.
final class MonitorThread: @unchecked Sendable {
    private enum Phase {
        /// No launch, or its job is done.
        case idle
        /// A launch's descriptors are watched; its job has not started.
        case armed
        /// The thread runs the launch's job.
        case running
        /// The thread ran the job; `finishJob` has not collected it yet.
        case done
    }

    private struct State {
        var phase = Phase.idle
        var job: (@Sendable () -> Void)?
        /// The armed launch's descriptors, registered once-only in the epoll set.
        var descriptors: [Int32] = []
        var stopping = false
    }

    private let state = Mutex(State())
    private let epoll: Int32
    /// The launch's deadline (its timeout), registered for good; disarmed between launches.
    private let timer: Int32
    /// Wakes the thread to stop, or to start a job whose descriptors epoll refused.
    private let kick: (read: Int32, write: Int32)
    /// The launches' wake pipe (`RunMonitor`), one launch at a time: a pipe made and closed per
    /// launch cost ~15 µs of kernel time (an inode each).
    let wake: (read: Int32, write: Int32)
    /// The launches' hook channel, one launch at a time, for the same reason (two sockets). Every
    /// process that could write to it is killed and reaped when its launch ends, and what an
    /// earlier launch left unread is dropped before the next one starts (`RunMonitor.start`).
    let hookChannel: HookChannel
    /// Posted when a job the thread ran is done.
    private let finished = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private var thread: DedicatedThread<Int>?

    init() throws(RunError) {
        var epoll: Int32 = -1
        var timer: Int32 = -1
        var kick: [Int32] = [-1, -1]
        var wake: [Int32] = [-1, -1]
        var error = lp_epoll_create(&epoll)
        if error == 0 { error = lp_timer_create(&timer) }
        if error == 0 { error = lp_pipe(&kick, true) }
        if error == 0 { error = lp_pipe(&wake, true) }
        if error == 0 { error = lp_epoll_add(epoll, timer, false) }
        if error == 0 { error = lp_epoll_add(epoll, kick[0], false) }
        guard error == 0 else {
            for fd in [epoll, timer, kick[0], kick[1], wake[0], wake[1]] where fd >= 0 { close(fd) }
            throw .system(operation: "set up the run monitor's epoll", errno: error)
        }
        do throws(RunError) {
            hookChannel = try HookChannel()
        } catch {
            for fd in [epoll, timer, kick[0], kick[1], wake[0], wake[1]] { close(fd) }
            throw error
        }
        self.epoll = epoll
        self.timer = timer
        self.kick = (kick[0], kick[1])
        self.wake = (wake[0], wake[1])
        sem_init(finished, 0, 0)
        thread = DedicatedThread { [self] in
            serve()
            return 0
        }
    }

    deinit {
        for fd in [epoll, timer, kick.read, kick.write, wake.read, wake.write] { close(fd) }
        hookChannel.close()
        sem_destroy(finished)
        finished.deallocate()
    }

    /// Watches `descriptors` and the deadline for one launch: `job` runs on the thread once one
    /// of them is readable or the deadline (CLOCK_MONOTONIC ns) passes. Call `finishJob` before
    /// arming the next launch.
    func arm(_ descriptors: [Int32], deadlineNs: UInt64?, job: @escaping @Sendable () -> Void) {
        let refused = state.withLock { state -> Bool in
            state.phase = .armed
            state.job = job
            state.descriptors = []
            var refused = false
            for fd in descriptors {
                if lp_epoll_add(epoll, fd, true) == 0 { state.descriptors.append(fd) } else { refused = true }
            }
            if lp_timer_set(timer, deadlineNs ?? 0) != 0 { refused = true }
            return refused
        }
        // Without its wake-ups the job must watch from the start: begin it now.
        if refused { poke() }
    }

    /// Ends the armed launch's watch. Returns true when the thread never started the job: its
    /// descriptors are no longer watched, and the caller makes the job's last pass itself.
    /// Otherwise calls `endRunningJob` (which tells the job to end) and waits for the job.
    func finishJob(endRunningJob: () -> Void) -> Bool {
        let phase = state.withLock { state -> Phase in
            let phase = state.phase
            if phase == .armed {
                disarm(&state, timer: false)
                state.phase = .idle
            }
            return phase
        }
        if phase == .running || phase == .done {
            if phase == .running { endRunningJob() }
            // The job posts once when it is done, whether or not it is done already.
            while sem_wait(finished) != 0 {}  // EINTR
            state.withLock { $0.phase = .idle }
        }
        return phase == .armed
    }

    /// Ends the thread (after the current job) and joins it.
    func stop() {
        state.withLock { $0.stopping = true }
        poke()
        _ = thread?.join()
        thread = nil
    }

    private func poke() {
        var byte = UInt8(ascii: "k")
        _ = write(kick.write, &byte, 1)
    }

    /// Forgets the launch's descriptors (under the lock); `timer`: its deadline too. A launch
    /// finished by its caller leaves the timer to the next `arm`, which resets it (a session
    /// idle past a timeout would wake the thread once, for nothing).
    private func disarm(_ state: inout State, timer disarmsTimer: Bool) {
        for fd in state.descriptors { _ = lp_epoll_remove(epoll, fd) }
        state.descriptors = []
        state.job = nil
        if disarmsTimer { _ = lp_timer_set(timer, 0) }
    }

    private func serve() {
        var ready = [Int32](repeating: -1, count: 16)
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = lp_epoll_wait(epoll, &ready, Int32(ready.count))
            if count < 0 { return }
            for fd in ready[..<Int(count)] where fd == kick.read || fd == timer {
                while read(fd, &bytes, bytes.count) > 0 {}
            }
            let job = state.withLock { state -> (@Sendable () -> Void)?? in
                if state.stopping { return .none }
                guard state.phase == .armed, let job = state.job else { return .some(nil) }
                disarm(&state, timer: true)
                state.phase = .running
                return .some(job)
            }
            guard let job else { return }
            guard let job else { continue }
            job()
            state.withLock { $0.phase = .done }
            sem_post(finished)
        }
    }
}
