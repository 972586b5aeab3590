import CLaunchprof
import LaunchprofReport
import LaunchprofSampling

#if canImport(Glibc)
import Glibc
#endif

/// One launch to trace.
public struct TraceRequest: Sendable {
    /// The file to execute (a resolved path).
    public var executable: String
    /// argv, argv[0] included.
    public var arguments: [String]
    /// The child's environment, as `KEY=VALUE`.
    public var environment: [String]
    public var workingDirectory: String?
    /// Descriptors for the child's 0, 1, 2 (-1: inherit launchprof's).
    public var standardInput: Int32 = -1
    public var standardOutput: Int32 = -1
    public var standardError: Int32 = -1
    /// The hook channel's child end, passed through under its own number (-1: none).
    public var hookDescriptor: Int32 = -1
    /// Pin the tracer and the child to this CPU until `main`, so every stop is a same-CPU switch.
    public var pinnedCPU: Int32?
    /// With `pinnedCPU` nil while the tracer's thread is pinned: start the child with
    /// launchprof's own CPU mask, not the thread's.
    public var unpinChild = false
    /// The plan for the first image (for a `#!` script: its interpreter's).
    public var plan: ImagePlan?
    /// Report the first successful listen(2) of the child or a descendant as readiness.
    public var detectListen = false
    /// Prewarm: hold the child frozen at this point until `freeze.hold` returns.
    public var freeze: TraceFreeze?
    /// Observe the boundaries with these uprobes instead of breakpoints (ptrace then only
    /// controls the process: exec, forks, signals, crashes).
    public var uprobes: UprobeRequest?
    /// Called with the child's pid as soon as the spawn returns, while the kernel is still
    /// finishing the exec: start there, on another thread, what must be in place before the
    /// program's first instruction (`--sample`'s perf events), and return at once.
    public var onSpawn: (@Sendable (Int32) -> Void)?
    /// Called at the exec stop, before the child runs its first instruction: returns when what
    /// `onSpawn` started is in place. The child is continued right after it returns.
    public var beforeFirstInstruction: (@Sendable () -> Void)?
    /// With `uprobes`: leave the launch's probe hits unread. The result's `pendingUprobeHits`
    /// reads them later (`PendingUprobeHits.completeAll`), with other launches' in one exchange.
    public var defersUprobeHits = false

    public init(executable: String, arguments: [String], environment: [String], plan: ImagePlan?) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.plan = plan
    }
}

/// A process's page faults (getrusage's `ru_majflt` and `ru_minflt`).
public struct PageFaults: Sendable, Equatable {
    public var major: UInt64
    public var minor: UInt64

    public init(major: UInt64, minor: UInt64) {
        self.major = major
        self.minor = minor
    }
}

/// What the tracer observed in one launch.
public struct TraceResult: Sendable {
    public var pid: Int32
    /// Boundaries in the order observed, the observer's merged in (`EventMerge`); the session
    /// merges the monitor's events (hooks, readiness, display) in the same way.
    public var events: [LaunchEvent]
    public var exitStatus: ExitStatus
    /// Descendants still alive when the child ended; launchprof killed them.
    public var leftoverProcesses: [Int32]
    /// Images the child exec'd that had no plan yet: analyse them and later runs observe them.
    public var unplannedImages: [String]
    /// Instruction pointers of the crashing thread, innermost first, when the child died of a
    /// signal that dumps core (SIGSEGV, SIGABRT, …).
    public var crashStack: [UInt64]
    /// The child's mappings at the crash, to symbolize `crashStack`: (start, end, file offset, path).
    public var crashMappings: [StackSymbolizer.Mapping]
    /// How long the child was held stopped while the tracer handled its stops, in all.
    public var pauseNs: UInt64
    /// Prewarm: when the child was held frozen (`TraceFreeze`), CLOCK_MONOTONIC ns from the stop
    /// to the resume; nil when it was not. Nothing the child did falls in it.
    public var heldFrozen: Range<UInt64>?
    /// The observer's own costs, each at its time: every stop (its pause), every probe hit.
    public var observerCosts: [ObserverCost] = []
    /// Probe hits the ring buffers had no room for (uprobe observer).
    public var lostSamples: UInt64 = 0
    /// The child's page faults over its life (the kernel's count, read as it was reaped): major
    /// ones read a page from disk — a launch that takes any did not run from the page cache
    /// alone. Nil when launchprof did not reap it (the trace stopped first).
    public var pageFaults: PageFaults?
    /// `TraceRequest.defersUprobeHits`: the hits not read yet; `events`, `observerCosts` and
    /// `lostSamples` lack them until `PendingUprobeHits.completeAll`.
    public var pendingUprobeHits: PendingUprobeHits?
    /// The signal that interrupted launchprof (Ctrl-C: SIGINT) when it is what ended the child.
    public var interruptedBy: Int32?
}

/// The uprobe observer of a session and what one hit costs on this host.
public struct UprobeRequest: Sendable {
    public var observer: UprobeObserver
    public var calibration: UprobeCalibration

    public init(observer: UprobeObserver, calibration: UprobeCalibration) {
        self.observer = observer
        self.calibration = calibration
    }
}

/// Launches a program under ptrace and records its launch boundaries.
///
/// The tracer is process control only: it spawns the child (`TracedProcesses`), runs the stop
/// loop, follows forks, clones and execs, holds the prewarm freeze, captures a crash's stack and
/// reaps everything at the end. What times the boundaries is its `LaunchObserver`, called at the
/// seams (each exec stop, each SIGTRAP, the end): `BreakpointObserver` (int3s removed as soon as
/// hit) or, with `TraceRequest.uprobes`, `UprobeLaunchObserver` (the child never stops at a
/// boundary). After `main` the child runs untouched; the app's own phases arrive through the
/// hook channel, not ptrace. All calls must come from one thread (see `DedicatedThread`).
public struct LaunchTracer: LaunchTracing {
    /// What earlier launches of the session learned, so later ones stop for less (`LearnedLayout`).
    public var learned: LearnedLayout

    public init(learned: LearnedLayout = LearnedLayout()) {
        self.learned = learned
    }

    public func trace(
        _ request: TraceRequest, planForImage: (String) -> ImagePlan?, control: TraceControl
    ) throws(TracerError) -> TraceResult {
        // The probe holder releases nothing while the launch runs (a release stalls forks and
        // execs machine-wide): told before the spawn, and once everything the launch made is
        // reaped. Only a connection made already: a ptrace-only session starts no holder.
        let holder = request.uprobes != nil ? UprobeHolderClient.shared() : UprobeHolderClient.existing()
        holder?.launchBegins()
        defer { holder?.launchEnded() }
        var launch = try TracedLaunch.spawn(request, control: control, learned: learned)
        do {
            try launch.run(planForImage: planForImage)
        } catch {
            launch.cleanUp()
            throw error
        }
        launch.cleanUp()
        return launch.result()
    }
}

/// The state of one traced launch, from spawn to exit.
private struct TracedLaunch {
    let request: TraceRequest
    let control: TraceControl
    /// The child and what it created; all are traced (PTRACE_O_TRACEFORK and friends).
    var processes: TracedProcesses
    var pid: pid_t { processes.child }
    /// What observes the boundaries: breakpoints, or the session's uprobes.
    var observer: any LaunchObserver
    var events: [LaunchEvent] = []
    var image = 0
    var exitStatus: ExitStatus?
    var unplannedImages: [String] = []
    var crashStack: [UInt64] = []
    var crashMappings: [StackSymbolizer.Mapping] = []
    var leftovers: [pid_t] = []
    /// Time the child spent stopped while the tracer worked (from each wait to the next CONT).
    var pauseNs: UInt64 = 0
    var pageFaults: PageFaults?
    var interruptedBy: Int32?
    var observerCosts: [ObserverCost] = []
    /// Processes stopped at a listen(2) entry, resumed to its exit to read the result.
    var listening: Set<pid_t> = []
    var sawListen = false
    /// Prewarm: the child was held frozen (`TraceFreeze`) for this long, kept out of `pauseNs`.
    var heldNs: UInt64 = 0
    var heldFrozen: Range<UInt64>?
    var frozen = false
    /// The child is pinned and gets its own mask back as it is next continued (at the exec stop
    /// when nothing stops it at `main`, else at `main`).
    var unpinAtNextResume = false

    static let options = Int32(
        LP_PTRACE_O_EXITKILL | LP_PTRACE_O_TRACEEXEC | LP_PTRACE_O_TRACEFORK
            | LP_PTRACE_O_TRACEVFORK | LP_PTRACE_O_TRACECLONE)

    var options: Int32 {
        let base = observer.tracesThreadsUntilMain ? Self.options : Self.options & ~Int32(LP_PTRACE_O_TRACECLONE)
        return request.detectListen
            ? base | Int32(LP_PTRACE_O_TRACESECCOMP | LP_PTRACE_O_TRACESYSGOOD) : base
    }

    static func spawn(
        _ request: TraceRequest, control: TraceControl, learned: LearnedLayout
    ) throws(TracerError) -> TracedLaunch {
        if let uprobes = request.uprobes, let plan = request.plan {
            try UprobeLaunchObserver.armBeforeSpawn(plan, uprobes: uprobes, path: request.executable)
        }
        var spawn = TracedProcesses.Spawn(
            executable: request.executable, arguments: request.arguments, environment: request.environment,
            workingDirectory: request.workingDirectory)
        spawn.standardInput = request.standardInput
        spawn.standardOutput = request.standardOutput
        spawn.standardError = request.standardError
        spawn.keepDescriptor = request.hookDescriptor
        spawn.cpu = request.pinnedCPU ?? Int32(request.unpinChild ? LP_SPAWN_CPU_LAUNCHPROFS : LP_SPAWN_CPU_INHERIT)
        spawn.trapListen = request.detectListen
        let (processes, spawnedAt) = try TracedProcesses.spawn(spawn)
        control.attach(processes.child)
        request.onSpawn?(processes.child)
        let observer: any LaunchObserver = request.uprobes.map {
            UprobeLaunchObserver(pid: processes.child, uprobes: $0, spawnedAt: spawnedAt)
        } ?? BreakpointObserver(pid: processes.child, learned: learned)
        var launch = TracedLaunch(
            request: request, control: control, processes: processes, observer: observer)
        // Room for a launch's events and stops, so the exec stop allocates nothing.
        launch.events.reserveCapacity(32)
        launch.observerCosts.reserveCapacity(8)
        launch.events.append(.spawned(atNs: spawnedAt))
        return launch
    }

    // MARK: The stop loop

    mutating func run(planForImage: (String) -> ImagePlan?) throws(TracerError) {
        // The first stop is the SIGTRAP that PTRACE_TRACEME delivers after the exec. Only what
        // needs the child stopped is done before it is continued: the options, its CPU mask,
        // the breakpoints; the uprobe observer's probes were armed before the spawn and its hits
        // are watched from the spawn on, so its notes are written while the child runs on.
        guard let first = try Ptrace.wait(pid) else { return }
        guard first.kind == LP_WAIT_STOPPED else {
            finish(first)
            return
        }
        try Ptrace.setOptions(pid, options)
        // Spawn → exec stop was a same-CPU switch; an observer that never stops the child at
        // main (or has nothing to stop it at) leaves no later place to unpin it. It is unpinned
        // as it is continued, on this CPU where its exec ran: continued with its mask already
        // wide, it would be woken on the idle CPU (this one is busy with the tracer) and load
        // away from the caches its exec filled, ~10% of a small program's launch (RESULTS §19).
        unpinAtNextResume = request.pinnedCPU != nil && (!observer.stopsAtMain || request.plan == nil)
        events.append(.imageStarted(image: 0, path: request.executable, atNs: first.at_ns))
        if observer.writesIntoChild {
            try startImage(plan: request.plan, path: request.executable)
            request.beforeFirstInstruction?()
            try resume(pid, stoppedAt: first.at_ns)
        } else {
            request.beforeFirstInstruction?()
            try resume(pid, stoppedAt: first.at_ns)
            try startImage(plan: request.plan, path: request.executable)
        }

        while true {
            let stop: lp_wait_result
            switch try processes.nextStop() {
            case .childEnded(let exit):
                finish(exit)
                return
            case .handled(let handled):
                try resume(handled.pid, stoppedAt: handled.at_ns)
                continue
            case .stopped(let next):
                stop = next
            }
            var signal: Int32 = 0
            do {
                signal = try handleStop(stop, planForImage: planForImage)
            } catch where error.processIsGone {
                signal = 0
            }
            if exitStatus != nil { return }
            try resume(stop.pid, stoppedAt: stop.at_ns, signal: signal)
        }
    }

    /// Continues a stopped process (to its system call's exit when it is at listen(2); the child,
    /// when `unpinAtNextResume`, given its own CPU mask back as it runs on), counting the child's
    /// pause since `stoppedAt`.
    private mutating func resume(_ process: pid_t, stoppedAt: UInt64, signal: Int32 = 0) throws(TracerError) {
        let pause = process == pid ? lp_now_ns() &- stoppedAt : nil
        // Recorded once the process runs on: nothing but the request inside the pause.
        defer {
            if let pause {
                pauseNs += pause
                observerCosts.append(ObserverCost(atNs: stoppedAt, costNs: pause))
            }
        }
        let unpin = process == pid && unpinAtNextResume
        if unpin { unpinAtNextResume = false }
        do {
            if listening.contains(process) {
                if unpin { _ = lp_affinity_restore(process) }
                try Ptrace.syscall(process)  // run to the syscall's exit, then stop again
            } else if unpin {
                try Ptrace.contThenUnpin(process, signal: signal)
            } else {
                try Ptrace.cont(process, signal: signal)
            }
        } catch where error.processIsGone {
            // Killed while stopped (timeout, Ctrl-C): its exit is the next thing to wait for.
        }
    }

    /// Handles one ptrace stop; returns the signal to deliver when continuing.
    private mutating func handleStop(
        _ stop: lp_wait_result, planForImage: (String) -> ImagePlan?
    ) throws(TracerError) -> Int32 {
        let event = stop.event
        if event == LP_PTRACE_EVENT_SECCOMP {
            if !sawListen { listening.insert(stop.pid) }
            return 0
        }
        if stop.value == SIGTRAP | 0x80, listening.remove(stop.pid) != nil {
            // Syscall-exit stop of listen(2): 0 means the socket is listening.
            if let registers = try? Ptrace.registers(stop.pid), registers.ret == 0, !sawListen {
                sawListen = true
                events.append(.ready(reason: "listening socket (pid \(stop.pid))", atNs: stop.at_ns))
                control.reportReady(at: stop.at_ns)
            }
            return 0
        }
        if event == LP_PTRACE_EVENT_EXEC {
            if stop.pid == pid { try startNextImage(at: stop.at_ns, planForImage: planForImage) }
            return 0
        }
        if event != 0 { return 0 }

        if stop.pid != pid { return try handleDescendantStop(stop) }

        if stop.value == SIGTRAP {
            let beforeMain = !observer.reachedMain
            if try observer.childTrapped(at: stop.at_ns, into: &events) {
                if beforeMain, observer.reachedMain { try reachedMain(at: stop.at_ns) }
                return 0
            }
        }
        if stop.value == SIGSTOP, request.freeze?.point == .selfStop, observer.reachedMain, !frozen,
            !Ptrace.isGroupStop(pid)
        {
            holdFrozen(stoppedAt: stop.at_ns)
            return 0  // the stop was the point; the signal is not delivered
        }
        if Ptrace.isGroupStop(pid) { return 0 }
        if isCrashSignal(stop.value) { captureCrash(pid) }
        return stop.value
    }

    private mutating func handleDescendantStop(_ stop: lp_wait_result) throws(TracerError) -> Int32 {
        let process = stop.pid
        if stop.value == SIGSTOP, Ptrace.isGroupStop(process) { return 0 }
        if stop.value == SIGTRAP, try observer.descendantTrapped(process, forked: processes.forked.contains(process)) {
            return 0
        }
        // A thread of the child (traced until main) crashing takes the whole child with it.
        if isCrashSignal(stop.value), processes.threads.contains(process), access("/proc/\(pid)/task/\(process)", F_OK) == 0 {
            captureCrash(process)
        }
        return stop.value
    }

    // MARK: Boundaries

    /// Notes what a freshly exec'd image leaves unobservable and hands it to the observer.
    private mutating func startImage(plan: ImagePlan?, path: String) throws(TracerError) {
        if let plan {
            for (phase, reason) in plan.unobservable {
                events.append(.unobservable(phase: phase, reason: reason))
            }
        } else {
            unplannedImages.append(path)
            for phase in ["loader.map", "loader.relocate", "loader.init", "program.init", "main"] {
                events.append(.unobservable(
                    phase: phase, reason: "image \(path) was not analysed before this run"))
            }
        }
        try observer.startImage(image, plan: plan, into: &events)
    }

    private mutating func startNextImage(
        at time: UInt64, planForImage: (String) -> ImagePlan?
    ) throws(TracerError) {
        image += 1
        let path = TracedProcesses.executablePath(pid) ?? request.executable
        events.append(.imageStarted(image: image, path: path, atNs: time))
        // The new image's threads are traced again until its main.
        try Ptrace.setOptions(pid, options)
        try startImage(plan: planForImage(path), path: path)
    }

    /// The child is stopped at `main`: it gets its own CPU mask back as it runs on, the threads
    /// it starts from here on go untraced, and prewarm may hold it frozen here.
    private mutating func reachedMain(at time: UInt64) throws(TracerError) {
        if request.pinnedCPU != nil { unpinAtNextResume = true }
        try Ptrace.setOptions(pid, options & ~Int32(LP_PTRACE_O_TRACECLONE))
        if request.freeze?.point == .main { holdFrozen(stoppedAt: time) }
    }

    /// Prewarm: hands the stopped child to `TraceFreeze.hold` and returns when it may resume.
    private mutating func holdFrozen(stoppedAt: UInt64) {
        guard let freeze = request.freeze, !frozen else { return }
        frozen = true
        let spawnedAt: UInt64
        if case .spawned(let time) = events.first { spawnedAt = time } else { spawnedAt = stoppedAt }
        let start = lp_now_ns()
        freeze.hold(pid, spawnedAt, stoppedAt)
        let resumed = lp_now_ns()
        heldNs += resumed &- start
        heldFrozen = stoppedAt..<max(resumed, stoppedAt)
    }

    // MARK: The end

    private mutating func finish(_ stop: lp_wait_result) {
        control.markExited()
        processes.ended(pid)
        let ending = endingRequest(stop)
        let status: ExitStatus
        if let ending, stop.kind == LP_WAIT_SIGNALED, stop.value == ending.signal || stop.value == SIGKILL {
            status = .killedByLaunchprof(signal: stop.value, reason: ending.reason)
        } else if let ending, stop.kind == LP_WAIT_EXITED {
            status = .exitedWhenEnded(code: stop.value, reason: ending.reason)
        } else if stop.kind == LP_WAIT_EXITED {
            status = .exited(code: stop.value)
        } else {
            status = .signaled(signal: stop.value, coreDumped: stop.core_dumped)
        }
        exitStatus = status
        pageFaults = PageFaults(major: stop.major_faults, minor: stop.minor_faults)
        if let ending { events.append(.endedByLaunchprof(reason: ending.reason, atNs: ending.atNs)) }
        events.append(.exited(status, atNs: stop.at_ns))
    }

    /// Why and when launchprof ended the child, if it did: a request through `TraceControl` (a
    /// timeout, the launch complete), or Ctrl-C, whose handler killed it (SIGKILL) with every
    /// other child launchprof started.
    private mutating func endingRequest(_ stop: lp_wait_result) -> (signal: Int32, reason: String, atNs: UInt64)? {
        if let termination = control.termination {
            return (termination.signal, termination.reason, control.terminationRequestedAt ?? stop.at_ns)
        }
        let interruption = lp_interrupted()
        guard interruption != 0, stop.kind == LP_WAIT_SIGNALED, stop.value == SIGKILL else { return nil }
        interruptedBy = interruption
        let at = lp_interrupted_at_ns()
        return (SIGKILL, "launchprof was interrupted by \(RunOutcome.signalName(interruption))", at == 0 ? stop.at_ns : at)
    }

    private func isCrashSignal(_ signal: Int32) -> Bool {
        [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP].contains(signal)
    }

    /// The child's thread `tid` is stopped at the delivery of a fatal signal: unwind it before it
    /// dies.
    private mutating func captureCrash(_ tid: pid_t) {
        guard crashStack.isEmpty else { return }
        crashStack = StackUnwinder.unwindStopped(tid)
        crashMappings = ProcessMappings.files(pid)
    }

    /// Kills whatever the launch left behind: descendants (a daemon the child forked) and the
    /// child itself if the tracer failed half-way. Reaps them all, so nothing stays stopped,
    /// traced or orphaned.
    mutating func cleanUp() {
        leftovers = processes.killAndReap()
        if exitStatus == nil { control.markExited() }
    }

    func result() -> TraceResult {
        let deferred = request.defersUprobeHits ? (observer as? UprobeLaunchObserver)?.pending(events: events) : nil
        let observation = deferred == nil ? observer.finish(events: events) : LaunchObservation(events: events)
        // A stack taken at a crash signal the program handled and lived through is no crash's.
        var diedOfSignal = false
        if case .signaled = exitStatus { diedOfSignal = true }
        var result = TraceResult(
            pid: pid, events: observation.events,
            exitStatus: exitStatus ?? .killedByLaunchprof(signal: SIGKILL, reason: "tracer failed"),
            leftoverProcesses: leftovers, unplannedImages: unplannedImages,
            crashStack: diedOfSignal ? crashStack : [], crashMappings: diedOfSignal ? crashMappings : [], pauseNs: pauseNs &- min(pauseNs, heldNs))
        result.observerCosts = (observerCosts + observation.costs).sorted { $0.atNs < $1.atNs }
        result.lostSamples = observation.lostSamples
        result.pageFaults = pageFaults
        result.heldFrozen = heldFrozen
        result.pendingUprobeHits = deferred
        result.interruptedBy = interruptedBy
        return result
    }
}
