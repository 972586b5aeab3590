import CLaunchprof
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Observes the launch boundaries with ptrace breakpoints, each removed as soon as it is hit:
/// the loader's `_dl_relocate_object` (relocation starts; the first initializer called ends it),
/// each shared object's first initializer, the program's (or its entry point), and `main`; in a
/// session's first launch also `_dl_debug_state`, to read the relocated initializer arrays.
/// What earlier launches learned (`LearnedLayout`) lets later ones arm everything at once.
struct BreakpointObserver: LaunchObserver {
    let pid: pid_t
    let learned: LearnedLayout
    private var breakpoints = BreakpointTable()
    private var plan: ImagePlan?
    private var loaderBias: UInt64 = 0
    /// The rules that turn breakpoint hits into boundary events.
    private var recorder = BoundaryRecorder()
    /// Events recorded during the current call, handed to the tracer when it returns.
    private var recorded: [LaunchEvent] = []

    init(pid: pid_t, learned: LearnedLayout) {
        self.pid = pid
        self.learned = learned
    }

    /// A thread could run into one of the int3s before `main`.
    var tracesThreadsUntilMain: Bool { true }
    /// The child stops at `main`, where it is unpinned.
    var stopsAtMain: Bool { true }
    var writesIntoChild: Bool { true }
    var reachedMain: Bool { recorder.reachedMain }

    mutating func startImage(_ image: Int, plan: ImagePlan?, into events: inout [LaunchEvent]) throws(TracerError) {
        if image > 0 {
            breakpoints.forget()
            recorder.startImage()
        }
        self.plan = plan
        guard let plan else { return }
        for phase in plan.runtime.phases { events.append(.unobservable(phase: phase, reason: RuntimeProbePlan.ptraceReason)) }
        defer { events += takeRecorded() }
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

    mutating func childTrapped(at time: UInt64, into events: inout [LaunchEvent]) throws(TracerError) -> Bool {
        let registers = try Ptrace.registers(pid)
        guard let actions = try breakpoints.hit(pid, pc: registers.pc) else { return false }
        defer { events += takeRecorded() }
        for action in actions {
            try perform(action, at: time, address: registers.pc &- 1, registers: registers)
        }
        return true
    }

    mutating func descendantTrapped(_ process: pid_t, forked: Bool) throws(TracerError) -> Bool {
        guard let registers = try? Ptrace.registers(process), breakpoints.contains(registers.pc &- 1) else {
            return false
        }
        // A forked copy gets its own byte back; a thread shares the memory, so the breakpoint
        // is simply consumed.
        if forked {
            try breakpoints.restoreCopy(process, at: registers.pc &- 1)
        } else {
            _ = try breakpoints.hit(process, pc: registers.pc)
        }
        return true
    }

    func finish(events: [LaunchEvent]) -> LaunchObservation {
        LaunchObservation(events: events)
    }

    private mutating func takeRecorded() -> [LaunchEvent] {
        defer { recorded = [] }
        return recorded
    }

    private mutating func perform(
        _ action: BreakpointTable.Action, at time: UInt64, address: UInt64, registers: lp_registers
    ) throws(TracerError) {
        guard case .boundary(let boundary) = action else {
            try loaderStateChanged(at: time, address: address)
            return
        }
        recorded += recorder.hit([boundary], atNs: time)
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
            // Nothing is observed after main: the child runs untouched from here.
            breakpoints.disarmAll(pid)
        }
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
        recorded.append(.unobservable(
            phase: "main", reason: "no libc main: neither a `main` symbol nor __libc_start_main"))
        recorded.append(.unobservable(phase: "program.init", reason: "its end, main, is not observable"))
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
}
