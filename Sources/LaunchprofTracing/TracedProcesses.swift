import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// The processes of one traced launch: the child, spawned under ptrace (stopped at its exec, or
/// seized while it runs), and every process and thread it creates (traced automatically with
/// PTRACE_O_TRACEFORK, VFORK and CLONE), until they are killed and reaped, so nothing stays
/// stopped, traced or orphaned. `LaunchTracer` and `HazardScanner` both keep their processes here.
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
        /// Attach with PTRACE_SEIZE and these options as soon as vfork returns, instead of
        /// stopping the child at its exec (PTRACE_TRACEME): see `Attachment`.
        var seizeOptions: Int32?
        /// Called with the child's pid between vfork's return and the seize (tests hold the
        /// seize back with it, to reach the cases a slow tracer meets).
        var beforeSeize: ((pid_t) -> Void)?
    }

    /// How the tracer came to trace the child.
    enum Attachment {
        /// PTRACE_TRACEME: the child stops with SIGTRAP at the end of its exec; options are set there.
        case execStop
        /// PTRACE_SEIZE landed inside the exec, before the exec had finished setting up the new
        /// image: the exec's PTRACE_EVENT_EXEC stop is still to come, before any instruction of
        /// the program.
        case seizedInExec
        /// PTRACE_SEIZE landed once the exec had set up the image, its stack at `startStack`. Either the
        /// exec's event stop is still to come (that stop's stack pointer is `startStack`), or the
        /// child ran some of its code untraced: what it forked by then was seized here too, but an
        /// exec or a crash in that time went unseen.
        case seizedLate(startStack: UInt64)
        /// The child had ended before PTRACE_SEIZE (a zombie cannot be attached): it ran
        /// untraced; its wait status, already reaped.
        case endedBeforeSeize(lp_wait_result)
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

    /// How the child came to be traced.
    private(set) var attachment = Attachment.execStop
    /// When the spawn returned: the child was past its exec's point of no return.
    private(set) var spawnReturnedAtNs: UInt64 = 0

    private init(child: pid_t) {
        self.child = child
        alive = [child]
    }

    /// Spawns the child in a new process group, stopped at its exec (PTRACE_TRACEME) or, with
    /// `Spawn.seizeOptions`, seized while it runs. Returns the processes and the spawn's time,
    /// read just before it (everything is allocated first: the spawn is timed, not the setup).
    static func spawn(_ spawn: Spawn) throws(TracerError) -> (processes: TracedProcesses, spawnedAtNs: UInt64) {
        let arguments = CStringArray(spawn.arguments)
        let environment = CStringArray(spawn.environment)
        let cwd = spawn.workingDirectory.map { strdup($0) }
        defer { cwd.map { free($0) } }
        var options = lp_spawn_options(
            stdin_fd: spawn.standardInput, stdout_fd: spawn.standardOutput, stderr_fd: spawn.standardError,
            keep_fd: spawn.keepDescriptor, cwd: cwd.map { UnsafePointer($0!) }, trace: spawn.seizeOptions == nil,
            cpu: spawn.cpu,
            new_process_group: true, trap_listen: spawn.trapListen)
        var pid: pid_t = 0
        // Seizing: real-time from here to the seize, so vfork's return runs this thread at once,
        // preempting the child if they share a CPU (else the seize can come after the launch).
        let realtime = spawn.seizeOptions != nil && lp_realtime_begin()  // ended by `seize`
        let spawnedAt = lp_now_ns()
        let error = lp_spawn(spawn.executable, arguments.pointers, environment.pointers, &options, &pid)
        guard error == 0 else {
            if realtime { lp_realtime_end() }
            throw .cannotExecute(path: spawn.executable, errno: error)
        }
        var processes = TracedProcesses(child: pid)
        processes.spawnReturnedAtNs = lp_now_ns()
        if let options = spawn.seizeOptions {
            spawn.beforeSeize?(pid)
            do {
                try processes.seize(options: options)
            } catch {
                processes.killAndReap()
                throw error
            }
        }
        lp_track_child(pid)
        return (processes, spawnedAt)
    }

    /// Attaches to the child, which vfork's return shows past its exec's point of no return.
    /// The tracer is usually faster than the exec's remaining work (mapping the program and the
    /// loader, the new stack), so the seize lands inside it and the exec's event stop follows;
    /// `attachment` says which case this was.
    private mutating func seize(options: Int32) throws(TracerError) {
        defer { lp_realtime_end() }  // at once: the rest needs no hurry
        do {
            try Ptrace.seize(child, options)
            lp_realtime_end()
        } catch {
            // EPERM also for a child that has already exited (a zombie cannot be attached).
            guard let ended = try Ptrace.wait(child, nohang: true) else { throw error }
            alive.remove(child)
            attachment = .endedBeforeSeize(ended)
            // What it forked is untraced, but in its process group: killed now, as the tracer
            // kills what a child leaves behind when it ends.
            kill(-child, SIGKILL)
            return
        }
        // The exec writes the program's code bounds into /proc/PID/stat only at its very end,
        // after the new stack (a few hundred ns before its event stop): 0 until then.
        let (startCode, startStack) = Self.codeAndStack(child)
        if startCode == 0 {
            attachment = .seizedInExec
        } else {
            attachment = .seizedLate(startStack: startStack)
            seizeChildren(of: child, options: options)
        }
    }

    /// Seizes the processes `process` forked before it was seized, and theirs.
    private mutating func seizeChildren(of process: pid_t, options: Int32) {
        for created in Self.children(of: process) where !alive.contains(created) {
            guard (try? Ptrace.seize(created, options)) != nil else { continue }  // ended meanwhile
            alive.insert(created)
            forked.insert(created)
            lp_track_child(created)
            seizeChildren(of: created, options: options)
        }
    }

    /// The children of every thread of `process` (/proc/PID/task/TID/children).
    static func children(of process: pid_t) -> [pid_t] {
        guard let directory = opendir("/proc/\(process)/task") else { return [] }
        defer { closedir(directory) }
        var children: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let thread = Int32(name),
                let text = SmallFile.read("/proc/\(process)/task/\(thread)/children")
            else { continue }
            children += text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int32($0) }
        }
        return children
    }

    /// The `startcode` and `startstack` fields of /proc/PID/stat (the 26th and 28th): where the
    /// program's code starts and the initial stack pointer, both final once the first is not 0.
    static func codeAndStack(_ process: pid_t) -> (startCode: UInt64, startStack: UInt64) {
        guard let stat = SmallFile.read("/proc/\(process)/stat"),
            let close = stat.lastIndex(of: ")")
        else { return (0, 0) }
        // After "pid (comm)" come the fields from the 3rd (state) on.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 25 else { return (0, 0) }
        return (UInt64(fields[23]) ?? 0, UInt64(fields[25]) ?? 0)
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
            // A seized parent's new process first stops with PTRACE_EVENT_STOP, a traced one's with SIGSTOP.
            if event == 0 || event == LP_PTRACE_EVENT_STOP, stop.value == SIGSTOP, stop.pid != child,
                isAttachStop(stop.pid)
            {
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
