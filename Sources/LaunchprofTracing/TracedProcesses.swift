import CLaunchprof

#if canImport(Glibc)
import Glibc
import LaunchprofSystem
#endif

/// The processes of one traced launch: the child, spawned stopped under ptrace, and every process
/// and thread it creates (traced automatically with PTRACE_O_TRACEFORK, VFORK and CLONE), until
/// they are killed and reaped, so nothing stays stopped, traced or orphaned. `LaunchTracer` and
/// `HazardScanner` both keep their processes here.
///
/// Every call must come from the thread that spawned the child (ptrace has thread affinity).
struct TracedProcesses {
    /// How to start the child.
    struct Spawn {
        var executable: String
        var arguments: [String]
        var environment: [String]
        var workingDirectory: String?
        /// Descriptors for the child's 0, 1, 2 (-1: inherit launchprof's).
        var standardInput: Int32 = -1
        var standardOutput: Int32 = -1
        var standardError: Int32 = -1
        /// A descriptor passed through under its own number (-1: none).
        var keepDescriptor: Int32 = -1
        /// A CPU, or `LP_SPAWN_CPU_INHERIT` / `LP_SPAWN_CPU_LAUNCHPROFS`.
        var cpu = Int32(LP_SPAWN_CPU_INHERIT)
        /// Stop the child at its listen(2) calls (seccomp), for listen readiness.
        var trapListen = false
    }

    /// The spawned process.
    let child: pid_t
    /// Every traced process still alive, the child included until it ends.
    private(set) var alive: Set<pid_t>
    /// Processes created whose first SIGSTOP (the auto-attach stop) has not been seen yet.
    private var newborns: Set<pid_t> = []
    /// Created processes that are threads of their creator (no process of their own).
    private(set) var threads: Set<pid_t> = []
    /// Created processes with a copy of their creator's memory (fork): a copy of any int3 too.
    private(set) var forked: Set<pid_t> = []

    private init(child: pid_t) {
        self.child = child
        alive = [child]
    }

    /// Spawns the child, stopped at its exec (PTRACE_TRACEME) in a new process group. Returns
    /// the processes and the spawn's time, read just before it (everything is allocated first:
    /// the spawn is timed, not the setup).
    static func spawn(_ spawn: Spawn) throws(TracerError) -> (processes: TracedProcesses, spawnedAtNs: UInt64) {
        let arguments = CStringArray(spawn.arguments)
        let environment = CStringArray(spawn.environment)
        let cwd = spawn.workingDirectory.map { strdup($0) }
        defer { cwd.map { free($0) } }
        var options = lp_spawn_options(
            stdin_fd: spawn.standardInput, stdout_fd: spawn.standardOutput, stderr_fd: spawn.standardError,
            keep_fd: spawn.keepDescriptor, cwd: cwd.map { UnsafePointer($0!) }, trace: true, cpu: spawn.cpu,
            new_process_group: true, trap_listen: spawn.trapListen)
        var pid: pid_t = 0
        let spawnedAt = lp_now_ns()
        let error = lp_spawn(spawn.executable, arguments.pointers, environment.pointers, &options, &pid)
        guard error == 0 else { throw .cannotExecute(path: spawn.executable, errno: error) }
        lp_track_child(pid)
        return (TracedProcesses(child: pid), spawnedAt)
    }

    /// The file `process` runs (`/proc/PID/exe`): after an exec, the new image.
    static func executablePath(_ process: pid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(process)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A process other than the child, still alive.
    var descendants: Set<pid_t> { alive.subtracting([child]) }

    /// Records the process a fork, vfork or clone event of `stop` created.
    mutating func created(by stop: lp_wait_result) throws(TracerError) {
        let process = pid_t(truncatingIfNeeded: try Ptrace.eventMessage(stop.pid))
        // The new process's first stop may be reported before its creator's event.
        if alive.insert(process).inserted {
            newborns.insert(process)
            lp_track_child(process)
        }
        if stop.event == LP_PTRACE_EVENT_CLONE { threads.insert(process) }
        if stop.event == LP_PTRACE_EVENT_FORK { forked.insert(process) }
    }

    /// Whether a SIGSTOP of `process` is its auto-attach stop, to continue without the signal.
    /// A stop before its creator's event records it now.
    mutating func isAttachStop(_ process: pid_t) -> Bool {
        if newborns.remove(process) != nil { return true }
        if alive.insert(process).inserted {
            lp_track_child(process)
            return true
        }
        return false
    }

    /// `process` ended and was reaped.
    mutating func ended(_ process: pid_t) {
        alive.remove(process)
        lp_untrack_child(process)
    }

    /// What `nextStop` waited for.
    enum Stop {
        /// The child ended (exited or killed): its wait status.
        case childEnded(lp_wait_result)
        /// A stop the set handled itself (a process created, a new process's attach stop):
        /// resume that process without a signal.
        case handled(lp_wait_result)
        /// Any other stop, for the caller.
        case stopped(lp_wait_result)
    }

    /// Waits for the next stop of any traced process. Descendants that end are reaped on the
    /// way; processes created and their attach stops are recorded.
    mutating func nextStop() throws(TracerError) -> Stop {
        while true {
            guard let stop = try Ptrace.wait() else { continue }
            if stop.kind != LP_WAIT_STOPPED {
                if stop.pid == child { return .childEnded(stop) }
                ended(stop.pid)  // nothing to resume after an exit
                continue
            }
            let event = stop.event
            if event == LP_PTRACE_EVENT_FORK || event == LP_PTRACE_EVENT_VFORK || event == LP_PTRACE_EVENT_CLONE {
                do {
                    try created(by: stop)
                } catch where error.processIsGone {
                    // Killed while stopped (timeout, Ctrl-C): its exit comes next.
                }
                return .handled(stop)
            }
            if event == 0, stop.value == SIGSTOP, stop.pid != child, isAttachStop(stop.pid) {
                return .handled(stop)
            }
            return .stopped(stop)
        }
    }

    /// Kills every process still alive and reaps them all. Returns the processes that were
    /// alive, but for the child and threads: what the launch left behind.
    @discardableResult
    mutating func killAndReap() -> [pid_t] {
        let leftovers = alive.filter { $0 != child && !threads.contains($0) }.sorted()
        for process in alive { kill(process, SIGKILL) }
        while !alive.isEmpty {
            guard let stop = try? Ptrace.wait() else { break }
            if stop.kind != LP_WAIT_STOPPED {
                ended(stop.pid)
            } else {
                // A process caught between stops: let it run into its SIGKILL.
                _ = lp_ptrace(Int32(LP_PTRACE_CONT), stop.pid, 0, 0, nil)
            }
        }
        return leftovers
    }
}
