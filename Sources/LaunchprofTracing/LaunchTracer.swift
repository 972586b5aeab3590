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

    public init(executable: String, arguments: [String], environment: [String], plan: ImagePlan?) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.plan = plan
    }
}

/// What the tracer observed in one launch.
public struct TraceResult: Sendable {
    public var pid: Int32
    /// Boundaries in the order observed (hook events are merged in by the caller).
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
    public var crashMappings: [ProcessMaps.Mapping]
    /// How long the child was held stopped while the tracer handled its stops, in all.
    public var pauseNs: UInt64
    /// The observer's own costs, each at its time: every stop (its pause), every probe hit.
    public var observerCosts: [ObserverCost] = []
    /// Probe hits the ring buffers had no room for (uprobe observer).
    public var lostSamples: UInt64 = 0
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
/// Every observation is a breakpoint the tracer removes as soon as it is hit: the loader's
/// `_dl_relocate_object` (relocation starts; the first initializer called ends it), each shared
/// object's first initializer, the program's (or its entry point), and `main`; in a session's
/// first launch also `_dl_debug_state`, to read the relocated initializer arrays. After `main`
/// the child runs untouched; the app's own phases arrive through the hook channel, not ptrace.
/// All calls must come from one thread (see `DedicatedThread`).
public struct LaunchTracer: LaunchTracing {
    /// What earlier launches of the session learned, so later ones stop for less (`LearnedLayout`).
    public var learned: LearnedLayout

    public init(learned: LearnedLayout = LearnedLayout()) {
        self.learned = learned
    }

    public func trace(
        _ request: TraceRequest, planForImage: (String) -> ImagePlan?, control: TraceControl
    ) throws(TracerError) -> TraceResult {
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
    let learned: LearnedLayout
    let pid: pid_t
    var events: [LaunchEvent] = []
    var breakpoints = BreakpointTable()
    var image = 0
    var plan: ImagePlan?
    var loaderBias: UInt64 = 0
    /// The rules that turn breakpoint hits into boundary events.
    var recorder = BoundaryRecorder()
    var exitStatus: ExitStatus?
    /// Processes and threads the child created; all are traced (PTRACE_O_TRACEFORK and friends).
    var descendants: Set<pid_t> = []
    /// Descendants whose first SIGSTOP (the auto-attach stop) has not been seen yet.
    var newborns: Set<pid_t> = []
    /// Descendants that are threads of the child (excluded from "left behind").
    var threads: Set<pid_t> = []
    /// Descendants with a copy of the child's memory (fork), which holds a copy of our int3s.
    var forked: Set<pid_t> = []
    var unplannedImages: [String] = []
    var crashStack: [UInt64] = []
    var crashMappings: [ProcessMaps.Mapping] = []
    var leftovers: [pid_t] = []
    /// Time the child spent stopped while the tracer worked (from each wait to the next CONT).
    var pauseNs: UInt64 = 0
    var observerCosts: [ObserverCost] = []
    /// The plan of each image, in exec order (uprobe observer).
    var imagePlans: [ImagePlan?] = []
    /// Processes stopped at a listen(2) entry, resumed to its exit to read the result.
    var listening: Set<pid_t> = []
    var sawListen = false
    /// Prewarm: the child was held frozen (`TraceFreeze`) for this long, kept out of `pauseNs`.
    var heldNs: UInt64 = 0
    var frozen = false

    static let options = Int32(
        LP_PTRACE_O_EXITKILL | LP_PTRACE_O_TRACEEXEC | LP_PTRACE_O_TRACEFORK
            | LP_PTRACE_O_TRACEVFORK | LP_PTRACE_O_TRACECLONE)

    var options: Int32 {
        // With uprobes no thread can run into a breakpoint of launchprof's: threads go untraced.
        let base = request.uprobes == nil ? Self.options : Self.options & ~Int32(LP_PTRACE_O_TRACECLONE)
        return request.detectListen
            ? base | Int32(LP_PTRACE_O_TRACESECCOMP | LP_PTRACE_O_TRACESYSGOOD) : base
    }

    static func spawn(
        _ request: TraceRequest, control: TraceControl, learned: LearnedLayout
    ) throws(TracerError) -> TracedLaunch {
        // Everything is allocated before the clock starts: the spawn is timed, not the setup.
        let arguments = CStringArray(request.arguments)
        let environment = CStringArray(request.environment)
        let cwd = request.workingDirectory.map { strdup($0) }
        defer { cwd.map { free($0) } }
        var options = lp_spawn_options(
            stdin_fd: request.standardInput, stdout_fd: request.standardOutput,
            stderr_fd: request.standardError, keep_fd: request.hookDescriptor,
            cwd: cwd.map { UnsafePointer($0!) }, trace: true,
            cpu: request.pinnedCPU ?? Int32(request.unpinChild ? LP_SPAWN_CPU_LAUNCHPROFS : LP_SPAWN_CPU_INHERIT),
            new_process_group: true, trap_listen: request.detectListen)
        var pid: pid_t = 0
        let spawnedAt = lp_now_ns()
        let error = lp_spawn(request.executable, arguments.pointers, environment.pointers, &options, &pid)
        guard error == 0 else { throw .cannotExecute(path: request.executable, errno: error) }
        lp_track_child(pid)
        control.attach(pid)
        request.onSpawn?(pid)
        var launch = TracedLaunch(request: request, control: control, learned: learned, pid: pid)
        launch.events.append(.spawned(atNs: spawnedAt))
        return launch
    }

    // MARK: The stop loop

    mutating func run(planForImage: (String) -> ImagePlan?) throws(TracerError) {
        // The first stop is the SIGTRAP that PTRACE_TRACEME delivers after the exec.
        guard let first = try Ptrace.wait(pid) else { return }
        guard first.kind == LP_WAIT_STOPPED else {
            finish(first)
            return
        }
        try Ptrace.setOptions(pid, options)
        events.append(.imageStarted(image: 0, path: request.executable, atNs: first.at_ns))
        try startImage(plan: request.plan, path: request.executable)
        request.beforeFirstInstruction?()

        var signalToDeliver: Int32 = 0
        var stopped = pid
        var stoppedAt = first.at_ns
        while true {
            if stopped == pid {
                let pause = lp_now_ns() &- stoppedAt
                pauseNs += pause
                observerCosts.append(ObserverCost(atNs: stoppedAt, costNs: pause))
            }
            do {
                if listening.contains(stopped) {
                    try Ptrace.syscall(stopped)  // run to the syscall's exit, then stop again
                } else {
                    try Ptrace.cont(stopped, signal: signalToDeliver)
                }
            } catch where error.processIsGone {
                // Killed while stopped (timeout, Ctrl-C): its exit is the next thing to wait for.
            }
            signalToDeliver = 0
            guard var stop = try Ptrace.wait() else { continue }
            if stop.kind != LP_WAIT_STOPPED {
                // Nothing to continue after an exit: wait for the next stop without a CONT.
                guard let next = try waitSkippingExits(after: stop) else { return }
                stop = next
            }
            stopped = stop.pid
            stoppedAt = stop.at_ns
            do {
                signalToDeliver = try handleStop(stop, planForImage: planForImage)
            } catch where error.processIsGone {
                signalToDeliver = 0
            }
            if exitStatus != nil { return }
        }
    }

    /// Records `exit` and waits until a process stops, recording exits of descendants on the
    /// way. Returns nil when the child itself ended.
    private mutating func waitSkippingExits(after exit: lp_wait_result) throws(TracerError) -> lp_wait_result? {
        var stop = exit
        while true {
            if stop.kind == LP_WAIT_STOPPED { return stop }
            if stop.pid == pid {
                finish(stop)
                return nil
            }
            descendants.remove(stop.pid)
            lp_untrack_child(stop.pid)
            guard let next = try Ptrace.wait() else { continue }
            stop = next
        }
    }

    /// Handles one ptrace stop; returns the signal to deliver when continuing.
    private mutating func handleStop(
        _ stop: lp_wait_result, planForImage: (String) -> ImagePlan?
    ) throws(TracerError) -> Int32 {
        let event = stop.event
        if event == LP_PTRACE_EVENT_FORK || event == LP_PTRACE_EVENT_VFORK || event == LP_PTRACE_EVENT_CLONE {
            let child = pid_t(truncatingIfNeeded: try Ptrace.eventMessage(stop.pid))
            // The child's first stop may be reported before its parent's event.
            if descendants.insert(child).inserted {
                newborns.insert(child)
                lp_track_child(child)
            }
            if event == LP_PTRACE_EVENT_CLONE { threads.insert(child) }
            if event == LP_PTRACE_EVENT_FORK { forked.insert(child) }
            return 0
        }
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
            let registers = try Ptrace.registers(pid)
            if let actions = try breakpoints.hit(pid, pc: registers.pc) {
                for action in actions {
                    try perform(action, at: stop.at_ns, address: registers.pc &- 1, registers: registers)
                }
                return 0
            }
        }
        if stop.value == SIGSTOP, request.freeze?.point == .selfStop, recorder.reachedMain, !frozen,
            !Ptrace.isGroupStop(pid)
        {
            holdFrozen(stoppedAt: stop.at_ns)
            return 0  // the stop was the point; the signal is not delivered
        }
        if Ptrace.isGroupStop(pid) { return 0 }
        if isCrashSignal(stop.value) { captureCrash() }
        return stop.value
    }

    private mutating func handleDescendantStop(_ stop: lp_wait_result) throws(TracerError) -> Int32 {
        let process = stop.pid
        if stop.value == SIGSTOP {
            if newborns.remove(process) != nil { return 0 }
            if descendants.insert(process).inserted {  // its parent's event comes later
                lp_track_child(process)
                return 0
            }
            if Ptrace.isGroupStop(process) { return 0 }
        }
        if stop.value == SIGTRAP, let registers = try? Ptrace.registers(process),
            breakpoints.contains(registers.pc &- 1)
        {
            // A descendant ran into one of our int3s: a forked copy gets its own byte back;
            // a thread shares the memory, so the breakpoint is simply consumed.
            if forked.contains(process) {
                try breakpoints.restoreCopy(process, at: registers.pc &- 1)
            } else {
                _ = try breakpoints.hit(process, pc: registers.pc)
            }
            return 0
        }
        return stop.value
    }

    // MARK: Boundaries

    /// Arms the first breakpoints of a freshly exec'd image.
    private mutating func startImage(plan: ImagePlan?, path: String) throws(TracerError) {
        self.plan = plan
        imagePlans.append(plan)
        guard let plan else {
            unplannedImages.append(path)
            for phase in ["loader.map", "loader.relocate", "loader.init", "program.init", "main"] {
                events.append(.unobservable(
                    phase: phase, reason: "image \(path) was not analysed before this run"))
            }
            return
        }
        for (phase, reason) in plan.unobservable {
            events.append(.unobservable(phase: phase, reason: reason))
        }
        if let uprobes = request.uprobes {
            // The probes were armed for the session; an image met for the first time gets them
            // now, inside this launch (a registration waits for a grace period): that run shows it.
            for (phase, reason) in plan.uprobeUnobservable where !plan.unobservable.contains(where: { $0.phase == phase }) {
                events.append(.unobservable(phase: phase, reason: reason))
            }
            // Its hits are kept for this launch even if another session reads the rings first.
            if image == 0 { uprobes.observer.watch(pid: pid) }
            // Spawn → exec stop was a same-CPU switch; from here the child needs its own mask.
            if image == 0, request.pinnedCPU != nil { _ = lp_affinity_restore(pid) }
            if !uprobes.observer.isArmed(plan.uprobes) {
                do throws(UprobeError) {
                    try uprobes.observer.arm(plan.uprobes)
                } catch {
                    throw .unexpectedStop(pid: pid, detail: error.description)
                }
            }
            return
        }
        // The exec stop's program counter is the first instruction of the new image: the
        // loader's entry point, or the program's for a static one. That gives the load address
        // without reading the auxiliary vector (which stays the fallback); the program's own
        // address comes from the loader's link map once relocation starts.
        let registers = try Ptrace.registers(pid)
        var programBias: UInt64 = 0
        let startBias = registers.pc &- (plan.loader?.entry ?? plan.entry)
        if startBias % 4096 == 0, plan.loader != nil || plan.isPositionIndependent || startBias == 0 {
            if plan.loader != nil { loaderBias = startBias } else { programBias = startBias }
        } else {
            let auxv = try AuxiliaryVector.read(pid, stackPointer: registers.sp)
            loaderBias = auxv.base
            programBias = plan.isPositionIndependent ? auxv.entry &- plan.entry : 0
        }
        // The boundaries to arm now, as offsets from one load bias: the loader's first
        // breakpoint, or (statically linked: no loader) the program's entry, init and main.
        var targets: [ArmingRecipe.Target]
        let bias: UInt64
        if let loader = plan.loader, loaderBias != 0 {
            bias = loaderBias
            targets = [loader.relocateObject.map { .init(node: 0, offset: $0, action: .boundary(.relocationStart)) }
                ?? .init(node: 0, offset: loader.debugState, action: .debugState)]
        } else {
            bias = programBias
            targets = [.init(node: 0, offset: plan.entry, action: .boundary(.entry))]
            if case .function(let function) = plan.programInitializer {
                targets.append(.init(node: 0, offset: function, action: .boundary(.programInit)))
            }
            if let main = mainTarget(node: { _ in nil }) { targets.append(main) }
            noteIfMainIsUnobservable(targets)
        }
        // Their text words, as an earlier launch of the same program found them; the first
        // launch reads them and records them for the next ones.
        let known = learned.execStopWords(for: plan.programPath).flatMap { $0.count == targets.count ? $0 : nil }
        if let known {
            for index in targets.indices { targets[index].word = known[index] }
        }
        try arm(targets, biases: [bias])
        if known == nil {
            learned.remember(
                execStopWords: targets.map { breakpoints.originalWord(at: bias &+ $0.offset) }, for: plan.programPath)
        }
    }

    private mutating func startNextImage(
        at time: UInt64, planForImage: (String) -> ImagePlan?
    ) throws(TracerError) {
        image += 1
        breakpoints.forget()
        recorder.startImage()
        let path = ProcessMaps.executablePath(pid) ?? request.executable
        events.append(.imageStarted(image: image, path: path, atNs: time))
        try Ptrace.setOptions(pid, recorder.reachedMain ? options & ~Int32(LP_PTRACE_O_TRACECLONE) : options)
        try startImage(plan: planForImage(path), path: path)
    }

    private mutating func perform(
        _ action: BreakpointTable.Action, at time: UInt64, address: UInt64, registers: lp_registers
    ) throws(TracerError) {
        guard case .boundary(let boundary) = action else {
            try loaderStateChanged(at: time, address: address)
            return
        }
        events += recorder.hit([boundary], atNs: time)
        switch boundary {
        case .relocationStart:
            // The link map is complete once relocation starts. If earlier launches taught us
            // where every initializer array points, arm everything now and skip the stop at
            // RT_CONSISTENT that would otherwise read the relocated arrays.
            if try !armLaunchBoundaries(arraysRelocated: false), let loader = plan?.loader {
                try breakpoints.arm(pid, at: loaderBias + loader.debugState, .debugState)
            }
        case .objectInit, .entry, .programInit: break
        case .libcStartMain:
            // x86_64: __libc_start_main(main, argc, argv, …) has `main` in %rdi.
            try breakpoints.arm(pid, at: registers.arg0, .boundary(.main))
        case .main:
            breakpoints.disarmAll(pid)
            if request.pinnedCPU != nil { _ = lp_affinity_restore(pid) }
            // Threads the app starts from here on need not be traced.
            try Ptrace.setOptions(pid, options & ~Int32(LP_PTRACE_O_TRACECLONE))
            if request.freeze?.point == .main { holdFrozen(stoppedAt: time) }
        }
    }

    /// Prewarm: hands the stopped child to `TraceFreeze.hold` and returns when it may resume.
    private mutating func holdFrozen(stoppedAt: UInt64) {
        guard let freeze = request.freeze, !frozen else { return }
        frozen = true
        let spawnedAt: UInt64
        if case .spawned(let time) = events.first { spawnedAt = time } else { spawnedAt = stoppedAt }
        let start = lp_now_ns()
        freeze.hold(pid, spawnedAt, stoppedAt)
        heldNs += lp_now_ns() &- start
    }

    /// `_dl_debug_state` was called: at RT_CONSISTENT the closure is mapped and relocated, so
    /// the relocated DT_INIT_ARRAY entries can be read (and remembered for later launches).
    private mutating func loaderStateChanged(at time: UInt64, address: UInt64) throws(TracerError) {
        guard let plan, let loader = plan.loader else { return }
        let state = try Ptrace.readWord(pid, at: loaderBias + loader.rDebug + 24) & 0xffff_ffff
        guard state == 0 /* RT_CONSISTENT */ else {
            // RT_ADD (mapping starts): only seen without `_dl_relocate_object`; step over it and
            // wait for the next call.
            try Ptrace.singleStep(pid)
            _ = try Ptrace.wait(pid)
            try breakpoints.arm(pid, at: address, .debugState)
            return
        }
        _ = try armLaunchBoundaries(arraysRelocated: true)
    }

    /// Arms every boundary after relocation: each object's first initializer, the program's,
    /// the entry when needed, and main. An object's first initializer is its DT_INIT, or its
    /// first DT_INIT_ARRAY entry, whose value exists only once relocated: read from memory when
    /// `arraysRelocated`, else taken from what an earlier launch learned. Returns false, arming
    /// nothing, when some entry is neither readable nor learned yet.
    private mutating func armLaunchBoundaries(arraysRelocated: Bool) throws(TracerError) -> Bool {
        guard let plan, let loader = plan.loader else { return false }
        if !arraysRelocated, let recipe = learned.recipe(for: plan.programPath),
            let biases = recipe.biases(pid, loaderBias: loaderBias)
        {
            try arm(recipe.targets, biases: biases)
            noteIfMainIsUnobservable(recipe.targets)
            return true
        }
        let objects = try LinkMap.read(
            pid, rDebug: loaderBias + loader.rDebug, earlier: learned.chain(for: plan.programPath))
        learned.remember(chain: objects, for: plan.programPath)
        guard !objects.isEmpty else { return false }  // the chain starts with the program
        var targets: [ArmingRecipe.Target] = []
        var arrays: [(key: String, node: Int, slot: UInt64, action: BreakpointTable.Action)] = []
        func initializer(key: String, node: Int, array: UInt64, action: BreakpointTable.Action) -> Bool {
            if arraysRelocated {
                arrays.append((key, node, array, action))
            } else if let offset = learned.initializerOffset(for: key) {
                targets.append(.init(node: node, offset: offset, action: action))
            } else {
                return false
            }
            return true
        }
        for (node, object) in objects.enumerated().dropFirst() {
            guard let key = object.key, let initializers = plan.initializers[key], !initializers.isEmpty else { continue }
            let action = BreakpointTable.Action.boundary(.objectInit(path: object.name))
            if let function = initializers.initFunction {
                targets.append(.init(node: node, offset: function, action: action))
            } else if let array = initializers.initArray {
                guard initializer(key: key, node: node, array: array, action: action) else { return false }
            }
        }
        switch plan.programInitializer {
        case .function(let function): targets.append(.init(node: 0, offset: function, action: .boundary(.programInit)))
        case .arraySlot(let slot):
            guard initializer(key: plan.programPath, node: 0, array: slot, action: .boundary(.programInit)) else { return false }
        case nil:
            // The entry point marks libc's start-up before the program's initializers: a few µs
            // in a dynamic program, less than the stop would cost, so it is observed only when
            // there is no initializer to mark the boundary.
            targets.append(.init(node: 0, offset: plan.entry, action: .boundary(.entry)))
        }
        let entries = try Ptrace.readWords(pid, at: arrays.map { objects[$0.node].bias &+ $0.slot })
        for (array, function) in zip(arrays, entries) where function != 0 && function != UInt64.max {
            let offset = function &- objects[array.node].bias
            learned.remember(initializerOffset: offset, for: array.key)
            targets.append(.init(node: array.node, offset: offset, action: array.action))
        }
        if let main = mainTarget(node: { key in objects.firstIndex { $0.key == key } }) { targets.append(main) }
        let biases = objects.map(\.bias)
        try arm(targets, biases: biases)
        noteIfMainIsUnobservable(targets)
        for index in targets.indices {
            targets[index].word = breakpoints.originalWord(at: biases[targets[index].node] &+ targets[index].offset)
        }
        learned.remember(recipe: ArmingRecipe(objects: objects, targets: targets, loaderBias: loaderBias), for: plan.programPath)
        return true
    }

    /// Arms `targets` in one batch, each at its node's bias plus its offset.
    private mutating func arm(_ targets: [ArmingRecipe.Target], biases: [UInt64]) throws(TracerError) {
        try breakpoints.arm(pid, targets.map { .init(address: biases[$0.node] &+ $0.offset, action: $0.action, word: $0.word) })
    }

    /// Notes `main` (and so the end of `program.init`) as unobservable when no target leads to it.
    private mutating func noteIfMainIsUnobservable(_ targets: [ArmingRecipe.Target]) {
        guard !targets.contains(where: { $0.action == .boundary(.main) || $0.action == .boundary(.libcStartMain) }) else { return }
        events.append(.unobservable(
            phase: "main", reason: "no libc main: neither a `main` symbol nor __libc_start_main"))
        events.append(.unobservable(phase: "program.init", reason: "its end, main, is not observable"))
    }

    /// Where `main` is observed: at `main` itself, else at `__libc_start_main`, whose argument
    /// it is. `node` finds the link-map node of an object by real path (0 is the program).
    private func mainTarget(node: (String) -> Int?) -> ArmingRecipe.Target? {
        guard let plan else { return nil }
        if let main = plan.main { return .init(node: 0, offset: main, action: .boundary(.main)) }
        if let start = plan.libcStartMain, let index = start.path == plan.programPath ? 0 : node(start.path) {
            return .init(node: index, offset: start.address, action: .boundary(.libcStartMain))
        }
        return nil
    }

    // MARK: The end

    private mutating func finish(_ stop: lp_wait_result) {
        control.markExited()
        lp_untrack_child(pid)
        let status: ExitStatus
        if let termination = control.termination,
            stop.kind == LP_WAIT_SIGNALED, stop.value == termination.signal
                || stop.value == SIGKILL
        {
            status = .killedByLaunchprof(signal: stop.value, reason: termination.reason)
        } else if let termination = control.termination, stop.kind == LP_WAIT_EXITED {
            status = .exitedWhenEnded(code: stop.value, reason: termination.reason)
        } else if stop.kind == LP_WAIT_EXITED {
            status = .exited(code: stop.value)
        } else {
            status = .signaled(signal: stop.value, coreDumped: stop.core_dumped)
        }
        exitStatus = status
        events.append(.exited(status, atNs: stop.at_ns))
    }

    private func isCrashSignal(_ signal: Int32) -> Bool {
        [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP].contains(signal)
    }

    /// The child is stopped at the delivery of a fatal signal: unwind it before it dies.
    private mutating func captureCrash() {
        guard crashStack.isEmpty else { return }
        crashStack = StackUnwinder.unwind(pid)
        crashMappings = ProcessMaps.read(pid)
    }

    /// Kills whatever the launch left behind: descendants (a daemon the child forked) and the
    /// child itself if the tracer failed half-way. Reaps them all, so nothing stays stopped,
    /// traced or orphaned.
    mutating func cleanUp() {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            descendants.insert(pid)
        }
        leftovers = descendants.filter { $0 != pid && !threads.contains($0) }.sorted()
        for process in descendants { kill(process, SIGKILL) }
        var remaining = descendants
        while !remaining.isEmpty {
            guard let stop = try? Ptrace.wait() else { break }
            if stop.kind != LP_WAIT_STOPPED {
                remaining.remove(stop.pid)
                lp_untrack_child(stop.pid)
            } else {
                // A process caught between stops: let it run into its SIGKILL.
                _ = lp_ptrace(Int32(LP_PTRACE_CONT), stop.pid, 0, 0, nil)
            }
        }
        if exitStatus == nil {
            control.markExited()
            lp_untrack_child(pid)
        }
    }

    func result() -> TraceResult {
        var events = self.events
        var costs = observerCosts
        var lost: UInt64 = 0
        if let uprobes = request.uprobes {
            // The child is gone: every hit it made is in the buffers.
            let drained = uprobes.observer.drain(pid: pid)
            lost = drained.lost
            var starts: [UInt64] = []
            for case .imageStarted(_, _, let time) in events { starts.append(time) }
            let images = zip(starts, imagePlans).map { UprobeLaunchEvents.Image(startNs: $0, plan: $1) }
            let observed = UprobeLaunchEvents(samples: drained.samples, images: images, calibration: uprobes.calibration)
            events = EventMerge.merge(events, observed.events)
            costs += observed.costs
        }
        var result = TraceResult(
            pid: pid, events: events,
            exitStatus: exitStatus ?? .killedByLaunchprof(signal: SIGKILL, reason: "tracer failed"),
            leftoverProcesses: leftovers, unplannedImages: unplannedImages,
            crashStack: crashStack, crashMappings: crashMappings, pauseNs: pauseNs &- min(pauseNs, heldNs))
        result.observerCosts = costs.sorted { $0.atNs < $1.atNs }
        result.lostSamples = lost
        return result
    }
}
