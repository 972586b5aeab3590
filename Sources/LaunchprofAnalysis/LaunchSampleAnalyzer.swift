import LaunchprofReport

/// Turns a run's sampled spans into what the report says: flags, call stack trees for the whole
/// launch and per phase, folded stacks, and the sampling summary. Pure: tested with plain spans.
///
/// Spans are cut at phase boundaries, so every piece of main-thread time belongs to one phase
/// (the innermost one running; time after `main` outside any hooked phase is `main`).
/// Sample counts in trees and folded stacks are wall-clock ticks: a tick every period from the
/// spawn, each counted for the piece of time it falls in, so a 120 ms wait weighs what 120 ms of
/// computing does, and every tree, phase tree and folded line adds up to the same counts (a
/// parent's count is its children's plus its own, never a rounding apart).
///
/// A prewarmed launch's hold (frozen by launchprof) is left out of everything: the process did
/// nothing of its own while frozen, so the hold is no work, no wait and no hang.
public struct LaunchSampleAnalyzer: Sendable {
    public var rateHz: Int
    public var periodNs: UInt64
    /// The least inclusive on-CPU time (`cpu`) or blocked time (`blocked`) flagged.
    public var flagThresholdNs: UInt64
    /// The main thread's id (the process id).
    public var mainThread: Int32

    public init(rateHz: Int, flagThresholdNs: UInt64, mainThread: Int32) {
        self.rateHz = max(rateHz, 1)
        self.periodNs = 1_000_000_000 / UInt64(max(rateHz, 1))
        self.flagThresholdNs = flagThresholdNs
        self.mainThread = mainThread
    }

    /// What a run's samples add up to.
    public struct Result: Sendable, Equatable {
        public var flags: [LaunchFlag]
        public var callStackTree: CallStackTree?
        public var sampling: LaunchSampling
        /// Folded stacks (`frame;frame;… count`, outermost first, the phase as the root).
        public var folded: [String: Int]
    }

    /// One piece of a span inside one phase.
    struct Piece {
        var span: SampledSpan
        var phase: String
        var startNs: UInt64
        var endNs: UInt64
        /// The sampling ticks (multiples of the period from the spawn) in `startNs ..< endNs`.
        var ticks: Int
        var durationNs: UInt64 { endNs - startNs }
    }

    /// Analyses `spans` (every sampled thread) of a launch that became ready at `readyNs` (ns
    /// from the spawn), with the run's phases; `frozen` is a prewarmed launch's hold (ns from the
    /// spawn), left out.
    public func analyse(
        spans: [SampledSpan], phases: [LaunchPhase], readyNs: UInt64, lostRecords: Int = 0, frozen: Range<UInt64>? = nil
    ) -> Result {
        var sampling = LaunchSampling(rateHz: rateHz, periodNs: periodNs, lostRecords: lostRecords)
        let frozen = frozen.flatMap { $0.isEmpty ? nil : $0 }
        sampling.frozenNs = frozen.map { UInt64($0.count) }
        guard readyNs >= periodNs else {
            sampling.note = LaunchSampling.tooShortNote(launchNs: readyNs, periodNs: periodNs, rateHz: rateHz)
            return Result(flags: [], callStackTree: nil, sampling: sampling, folded: [:])
        }
        let pieces = cut(spans.filter { $0.startNs < readyNs }, phases: phases, readyNs: readyNs, frozen: frozen)
        let main = pieces.filter { $0.span.thread == mainThread }
        sampling.sampleCount = spans.filter {
            $0.thread == mainThread && $0.startNs < readyNs && frozen?.contains($0.startNs) != true
        }.count
        for piece in main {
            switch piece.span.state {
            case .onCPU: sampling.onCPUNs += piece.durationNs
            case .runnable: sampling.runnableNs += piece.durationNs
            case .blocked: sampling.blockedNs += piece.durationNs
            }
        }
        var phaseOrder: [String] = []
        for piece in main where !phaseOrder.contains(piece.phase) { phaseOrder.append(piece.phase) }
        sampling.phaseCallStackTrees = phaseOrder.compactMap { phase in
            let tree = callStackTree(main.filter { $0.phase == phase })
            return tree.callStacks.isEmpty ? nil : PhaseCallStackTree(phase: phase, callStackTree: tree)
        }
        var flags: [LaunchFlag] = []
        let mainSpans = spans.filter { $0.thread == mainThread }.sorted { $0.startNs < $1.startNs }
        for phase in phaseOrder {
            let inPhase = main.filter { $0.phase == phase }
            let phaseFrame = phaseFramePath(inPhase, phase: phase, mainSpans: mainSpans)
            flags += cpuFlags(inPhase, phase: phase, phaseFrame: phaseFrame)
            flags += blockedFlags(inPhase, phase: phase, phaseFrame: phaseFrame)
            flags += hangFlags(inPhase, phase: phase, phaseFrame: phaseFrame)
        }
        flags.sort { ($0.startNs ?? 0, $0.kind.rawValue) < ($1.startNs ?? 0, $1.kind.rawValue) }
        let tree = callStackTree(pieces)
        return Result(
            flags: flags, callStackTree: tree.callStacks.isEmpty ? nil : tree, sampling: sampling,
            folded: folded(pieces))
    }

    // MARK: Phases

    /// Cuts spans at phase boundaries and at readiness, leaving out the `frozen` hold.
    func cut(_ spans: [SampledSpan], phases: [LaunchPhase], readyNs: UInt64, frozen: Range<UInt64>? = nil) -> [Piece] {
        // Main-thread phases: the extended-launch tasks run on other threads.
        let ranges = phases.filter { $0.name != LaunchPhase.extendedLaunch && $0.durationNs > 0 }
        let mainNs = phases.first { $0.name == LaunchPhase.main }?.startNs
        var boundaries = Set<UInt64>([readyNs])
        for phase in ranges {
            boundaries.insert(phase.startNs)
            boundaries.insert(phase.endNs)
        }
        if let frozen {
            boundaries.insert(frozen.lowerBound)
            boundaries.insert(frozen.upperBound)
        }
        // Ticks at multiples of the period in [0, t).
        func ticks(before t: UInt64) -> Int { Int(t / periodNs + (t % periodNs == 0 ? 0 : 1)) }
        let sorted = boundaries.sorted()
        func phase(at time: UInt64) -> String {
            // The innermost: the latest-starting phase covering the time.
            var best: LaunchPhase?
            for candidate in ranges where candidate.startNs <= time && time < candidate.endNs {
                if best == nil || candidate.startNs >= best!.startNs { best = candidate }
            }
            if let best { return best.name }
            if let mainNs, time >= mainNs { return LaunchPhase.main }
            return "launch"
        }
        var pieces: [Piece] = []
        for span in spans {
            let end = min(span.endNs, readyNs)
            guard end > span.startNs else { continue }
            var start = span.startNs
            var index = sorted.firstIndex { $0 > start } ?? sorted.endIndex
            while start < end {
                let stop = index < sorted.endIndex ? min(sorted[index], end) : end
                if stop > start, frozen?.contains(start) != true {
                    pieces.append(Piece(
                        span: span, phase: phase(at: start + (stop - start) / 2), startNs: start, endNs: stop,
                        ticks: ticks(before: stop) - ticks(before: start)))
                }
                start = stop
                index += 1
            }
        }
        return pieces
    }

    // MARK: Flags

    private struct Key: Hashable {
        var name: String
        var object: String

        init(name: String, object: String) {
            self.name = name
            self.object = object
        }

        init(_ frame: SampledFrame) {
            self.init(name: frame.name, object: frame.object)
        }
    }

    /// Call tree node for flag finding.
    private final class Node {
        var key: Key
        var frame: SampledFrame
        var durationNs: UInt64 = 0
        var ticks = 0
        var firstNs: UInt64 = .max
        var children: [Key: Node] = [:]
        var order: [Key] = []

        init(key: Key, frame: SampledFrame) {
            self.key = key
            self.frame = frame
        }

        func child(_ frame: SampledFrame) -> Node {
            let key = Key(frame)
            if let node = children[key] { return node }
            let node = Node(key: key, frame: frame)
            children[key] = node
            order.append(key)
            return node
        }

        /// Children, heaviest first (first seen first among equals).
        var heaviestFirst: [Node] {
            order.compactMap { children[$0] }.enumerated()
                .sorted { ($0.element.durationNs, -$0.offset) > ($1.element.durationNs, -$1.offset) }
                .map(\.element)
        }

        var selfNs: UInt64 { durationNs - children.values.reduce(0) { $0 + $1.durationNs } }
    }

    private func buildTree(_ pieces: [Piece]) -> Node {
        let root = Node(key: Key(name: "", object: ""), frame: SampledFrame(function: nil, object: "", address: 0, offset: 0))
        for piece in pieces {
            var node = root
            node.durationNs += piece.durationNs
            node.ticks += piece.ticks
            for frame in piece.span.frames.reversed().prefix(CallStackTree.maximumDepth) {
                node = node.child(frame)
                node.durationNs += piece.durationNs
                node.ticks += piece.ticks
                node.firstNs = min(node.firstNs, piece.startNs)
            }
        }
        return root
    }

    /// The phase's own frame: the function that ran the phase (it called the phase's hooks, or
    /// it is `main` for the `main` phase), as the root-first keys of its stack. Its callees are
    /// what the app's author wrote and can move, so flags name them.
    ///
    /// For a phase the app hooks, and for `main`, it is `main`; deeper when the main thread's
    /// stacks just outside the phase (the last sample before its begin, the first after its end)
    /// share more of the stack holding most (80 %) of the phase's time and then leave it there —
    /// a handler that did other work around the phase. A stack outside that only stops short of
    /// the dominant one (a sample in the work itself, as when launchprof stamped a `-` hook line
    /// late) says nothing. Below it, launchprof's own app framework is skipped (the phase frame
    /// is the delegate method it called), and a function named after the phase
    /// (`did_finish_launching`, `AppDelegate.didFinishLaunching(options:)`) is the handler. For
    /// the phases before `main`, it is the loader's or libc's call of the initializer.
    private func phaseFramePath(_ pieces: [Piece], phase: String, mainSpans: [SampledSpan]) -> [Key] {
        let root = buildTree(pieces)
        let hooked = !Self.builtInPhases.contains(phase)
        var path: [Node] = []
        if hooked || phase == LaunchPhase.main,
            let found = Self.heaviestPath(in: root, to: { node, _ in node.frame.function == "main" })
        {
            path = found
        } else if let found = Self.heaviestPath(in: root, to: { node, parent in !node.frame.isSystem && parent?.frame.isSystem == true }) {
            path = Array(found.dropLast())
        }
        if hooked {
            // The stack holding most of the phase's time.
            var dominant: [Node] = []
            var node = root
            while let next = node.heaviestFirst.first, next.durationNs * 5 >= root.durationNs * 4 {
                dominant.append(next)
                node = next
            }
            let keys = dominant.map(\.key)
            let startNs = pieces.map(\.startNs).min() ?? 0
            let endNs = pieces.map(\.endNs).max() ?? 0
            // Stacks unwound to the same root as the phase's (a stack cut short says nothing).
            func whole(_ span: SampledSpan) -> Bool { span.frames.last.map(Key.init) == keys.first }
            let outside = [mainSpans.last { $0.endNs <= startNs && whole($0) }, mainSpans.first { $0.startNs >= endNs && whole($0) }]
                .compactMap { $0 }
            // Where each leaves the dominant stack (nil: it only stops short of it).
            let leaves = outside.map { span -> Int? in
                let frames = span.frames.reversed().map(Key.init)
                return frames.indices.first { $0 < keys.count && frames[$0] != keys[$0] }
            }
            if !leaves.isEmpty, leaves.allSatisfy({ $0 != nil }), let shared = leaves.compactMap({ $0 }).min(),
                shared > path.count, Array(keys.prefix(path.count)) == path.map(\.key)
            {
                path = Array(dominant.prefix(shared))
            }
        }
        // Below the phase frame, the stack holding most of its time.
        var chain = path
        var last = path.last ?? root
        while let next = last.heaviestFirst.first, next.durationNs * 5 >= last.durationNs * 4 {
            chain.append(next)
            last = next
        }
        var index = path.count - 1  // -1: above the first frame
        // launchprof's app framework ran the phase: the phase frame is the delegate method.
        var skipped = false
        while index + 1 < chain.count, Self.isFramework(chain[index + 1].frame) {
            index += 1
            skipped = true
        }
        if skipped, index + 1 < chain.count { index += 1 }
        // A handler that begins its phase first thing: a function named after the phase.
        let wanted = Self.letters(phase)
        if hooked, wanted.count >= 4,
            let handler = chain.indices.dropFirst(index + 1).first(where: {
                Self.letters(chain[$0].frame.function ?? "").contains(wanted)
            })
        {
            index = handler
        }
        return chain.prefix(index + 1).map(\.key)
    }

    /// The root-first nodes down to the heaviest node (the shallowest of equals) for which
    /// `matches(node, parent)` holds; nil when none does.
    private static func heaviestPath(in root: Node, to matches: (Node, Node?) -> Bool) -> [Node]? {
        var best: [Node]?
        func visit(_ node: Node, _ path: [Node]) {
            for child in node.order.compactMap({ node.children[$0] }) {
                let here = path + [child]
                if matches(child, path.last), (best?.last?.durationNs ?? 0, here.count) < (child.durationNs, best?.count ?? .max) {
                    best = here
                }
                visit(child, here)
            }
        }
        visit(root, [])
        return best
    }

    /// Phases launchprof times itself (not an app's hooks).
    static let builtInPhases: Set<String> = [
        LaunchPhase.exec, LaunchPhase.loaderMap, LaunchPhase.loaderRelocate, LaunchPhase.loaderInit,
        LaunchPhase.programStart, LaunchPhase.programInit, LaunchPhase.main, LaunchPhase.firstFrame,
        LaunchPhase.extendedLaunch, LaunchPhase.exit, "launch",
    ]

    /// Lowercase letters and digits only: `did_finish_launching` matches `didFinishLaunching`.
    static func letters(_ text: String) -> String {
        String(text.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    /// A frame of launchprof's own app framework (`LaunchprofApplication` runs the phases).
    static func isFramework(_ frame: SampledFrame) -> Bool {
        frame.function?.contains("LaunchprofApp.") == true
    }

    /// The node at `path` under `root`.
    private func node(at path: [Key], in root: Node) -> Node? {
        var node = root
        for key in path {
            guard let next = node.children[key] else { return nil }
            node = next
        }
        return node
    }

    /// The owner of work below the phase frame: its callee, or the first frame of the author's
    /// on the hot path when the callee is the C library's (`qsort` calling back).
    private func owner(below phaseFrame: Node) -> [Node] {
        var result: [Node] = []
        for child in phaseFrame.order.compactMap({ phaseFrame.children[$0] }) {
            var node = child
            while node.frame.isSystem, let next = node.heaviestFirst.first, next.durationNs >= flagThresholdNs { node = next }
            result.append(node.frame.isSystem ? child : node)
        }
        return result
    }

    /// From `node` down the heaviest children with at least the threshold, to the innermost
    /// function outside the C library and the loader.
    private func hotPath(from node: Node) -> [String] {
        var chain = [node]
        var current = node
        while let next = current.heaviestFirst.first, next.durationNs >= flagThresholdNs {
            chain.append(next)
            current = next
        }
        while chain.count > 1, chain.last?.frame.isSystem == true { chain.removeLast() }
        return chain.map(\.key.name)
    }

    /// `cpu`: the callees of the phase frame with at least the threshold of inclusive on-CPU
    /// time in the phase, each with its path down to the innermost hot function.
    private func cpuFlags(_ pieces: [Piece], phase: String, phaseFrame: [Key]) -> [LaunchFlag] {
        let root = buildTree(pieces.filter { $0.span.state == .onCPU })
        guard let top = node(at: phaseFrame, in: root) else { return [] }
        var found: [LaunchFlag] = []
        func flag(_ node: Node, durationNs: UInt64, path: [String]) {
            found.append(LaunchFlag(
                kind: .cpu, phase: phase, function: node.key.name, object: node.key.object,
                durationNs: durationNs, startNs: node.firstNs, path: path.count > 1 ? path : nil,
                advice: "\(node.key.name) computes for \(DurationText.text(durationNs)) on the main thread in \(phase): defer it until after the first frame, or move it off the main thread"))
        }
        // The phase frame computing in its own body, or in the C library with nothing of the
        // app's below (memcpy called by the handler itself).
        var ownNs = top.selfNs
        for owner in owner(below: top) {
            if owner.frame.isSystem {
                ownNs += owner.durationNs
            } else if owner.durationNs >= flagThresholdNs {
                flag(owner, durationNs: owner.durationNs, path: hotPath(from: owner))
            }
        }
        if top !== root, !top.frame.isSystem, ownNs >= flagThresholdNs {
            flag(top, durationNs: ownNs, path: [top.key.name])
        }
        return merged(found)
    }

    /// The path of a stack from the phase frame's callee down to `innermost` (an index in the
    /// innermost-first frames); nil when the stack does not pass through the phase frame.
    private func path(_ frames: [SampledFrame], phaseFrame: [Key], to innermost: Int) -> [String]? {
        let rootFirst = frames.reversed().map(Key.init)
        guard rootFirst.count > phaseFrame.count, Array(rootFirst.prefix(phaseFrame.count)) == phaseFrame else { return nil }
        let last = frames.count - 1 - innermost
        guard last >= phaseFrame.count else { return nil }
        return rootFirst[phaseFrame.count...last].map(\.name)
    }

    /// `blocked`: a function (outside libc) that kept the main thread waiting in one system call
    /// for at least the threshold in the phase. It names the function that made the call, the
    /// path shows how the phase's own code got there.
    private func blockedFlags(_ pieces: [Piece], phase: String, phaseFrame: [Key]) -> [LaunchFlag] {
        struct BlockKey: Hashable {
            var key: Key
            var syscall: String?
        }
        var totals: [BlockKey: (durationNs: UInt64, firstNs: UInt64, path: [String]?)] = [:]
        var order: [BlockKey] = []
        for piece in pieces where piece.span.state == .blocked {
            let frames = piece.span.frames
            guard let index = frames.firstIndex(where: { !$0.isSystem }) ?? (frames.isEmpty ? nil : 0) else { continue }
            let key = BlockKey(key: Key(frames[index]), syscall: piece.span.syscall)
            if totals[key] == nil { order.append(key) }
            var total = totals[key] ?? (0, piece.startNs, path(frames, phaseFrame: phaseFrame, to: index))
            total.durationNs += piece.durationNs
            totals[key] = total
        }
        return order.compactMap { key in
            guard let total = totals[key], total.durationNs >= flagThresholdNs else { return nil }
            let waitingIn = key.syscall.map { "in \($0)()" } ?? "off the CPU"
            return LaunchFlag(
                kind: .blocked, phase: phase, function: key.key.name, object: key.key.object,
                durationNs: total.durationNs, syscall: key.syscall, startNs: total.firstNs,
                path: (total.path?.count ?? 0) > 1 ? total.path : nil,
                advice: "\(key.key.name) waits \(DurationText.text(total.durationNs)) \(waitingIn) on the main thread in \(phase): do it asynchronously or on another thread, or defer it until after the first frame")
        }
    }

    /// `hang`: a stretch of at least 250 ms in which the main thread never left one callee of
    /// the phase frame (busy or blocked); its path goes down to the deepest function present the
    /// whole stretch. A phase frame busy that long across several callees is itself the hang.
    private func hangFlags(_ pieces: [Piece], phase: String, phaseFrame: [Key]) -> [LaunchFlag] {
        struct Run {
            var key: Key
            var startNs: UInt64
            var endNs: UInt64
            var blockedNs: UInt64 = 0
            var syscalls: [String: UInt64] = [:]
            /// Root-first frames below the phase frame present in every piece so far.
            var shared: [Key]

            mutating func add(_ piece: Piece, below: [Key]) {
                endNs = piece.endNs
                if piece.span.state == .blocked {
                    blockedNs += piece.durationNs
                    if let syscall = piece.span.syscall { syscalls[syscall, default: 0] += piece.durationNs }
                }
                var count = 0
                while count < shared.count, count < below.count, shared[count] == below[count] { count += 1 }
                shared.removeLast(shared.count - count)
            }
        }
        var ownerRun: Run?
        var frameRun: Run?
        var closed: [Run] = []
        var previousEnd: UInt64?
        var systemKeys = Set<Key>()
        func close(_ run: inout Run?) {
            if let finished = run, finished.endNs - finished.startNs >= LaunchFlag.hangThresholdNs { closed.append(finished) }
            run = nil
        }
        for piece in pieces.sorted(by: { $0.startNs < $1.startNs }) {
            if let previousEnd, piece.startNs > previousEnd {
                close(&ownerRun)  // a gap: nothing was sampled
                close(&frameRun)
            }
            previousEnd = piece.endNs
            for frame in piece.span.frames where frame.isSystem { systemKeys.insert(Key(frame)) }
            let rootFirst = piece.span.frames.reversed().map(Key.init)
            // A stack not through the phase frame (an unwind cut short) neither extends nor ends
            // a stretch.
            guard rootFirst.count >= phaseFrame.count, Array(rootFirst.prefix(phaseFrame.count)) == phaseFrame,
                let phaseKey = phaseFrame.last ?? rootFirst.first
            else { continue }
            // Below the phase frame from its first callee of the app's (the C library's frames
            // above it blamed on the phase frame).
            let belowFrames = piece.span.frames.reversed().dropFirst(phaseFrame.count)
            let below = Array(belowFrames.drop { $0.isSystem }.map(Key.init))
            if frameRun == nil { frameRun = Run(key: phaseKey, startNs: piece.startNs, endNs: piece.endNs, shared: []) }
            frameRun?.add(piece, below: [])
            if let owner = below.first {
                if ownerRun?.key != owner {
                    close(&ownerRun)
                    ownerRun = Run(key: owner, startNs: piece.startNs, endNs: piece.endNs, shared: below)
                }
                ownerRun?.add(piece, below: below)
            } else {
                close(&ownerRun)
            }
        }
        close(&ownerRun)
        close(&frameRun)
        let owners = closed.filter { !$0.shared.isEmpty }
        // The phase frame's own stretch only where no callee's stretch explains it.
        let kept = owners + closed.filter { run in
            run.shared.isEmpty && !phaseFrame.isEmpty
                && !owners.contains { $0.startNs < run.endNs && run.startNs < $0.endNs }
        }
        return kept.map { run in
            let duration = run.endNs - run.startNs
            let syscall = run.blockedNs * 2 > duration ? run.syscalls.max { $0.value < $1.value }?.key : nil
            var path = run.shared.map(\.name)
            while path.count > 1, systemKeys.contains(run.shared[path.count - 1]) { path.removeLast() }
            return LaunchFlag(
                kind: .hang, phase: phase, function: run.key.name, object: run.key.object, durationNs: duration,
                syscall: syscall, startNs: run.startNs, path: path.count > 1 ? path : nil,
                advice: "the main thread stayed in \(run.key.name) for \(DurationText.text(duration)) in \(phase) (a hang: 250 ms or more unresponsive): split the work, move it off the main thread, or defer it")
        }
        .sorted { $0.startNs ?? 0 < $1.startNs ?? 0 }
    }

    /// One flag per function and phase (a function reached through two callers adds up).
    private func merged(_ flags: [LaunchFlag]) -> [LaunchFlag] {
        var result: [LaunchFlag] = []
        for flag in flags {
            if let index = result.firstIndex(where: { $0.function == flag.function && $0.object == flag.object }) {
                result[index].durationNs += flag.durationNs
                result[index].startNs = min(result[index].startNs ?? .max, flag.startNs ?? .max)
                result[index].advice = flag.advice.replacingFirstDuration(with: result[index].durationNs)
            } else {
                result.append(flag)
            }
        }
        return result
    }

    // MARK: Trees and folded stacks

    /// MetricKit's shape: one call stack per thread, the main thread first and attributed.
    func callStackTree(_ pieces: [Piece]) -> CallStackTree {
        var threads: [Int32] = []
        for piece in pieces where !threads.contains(piece.span.thread) { threads.append(piece.span.thread) }
        threads.sort { ($0 == mainThread ? 0 : 1, $0) < ($1 == mainThread ? 0 : 1, $1) }
        let stacks = threads.compactMap { thread -> CallStackTree.CallStack? in
            let root = buildTree(pieces.filter { $0.span.thread == thread })
            let frames = root.order.compactMap { frame(root.children[$0]!) }
            return frames.isEmpty ? nil : CallStackTree.CallStack(threadAttributed: thread == mainThread, callStackRootFrames: frames)
        }
        return CallStackTree(callStackPerThread: true, callStacks: stacks)
    }

    private func frame(_ node: Node) -> CallStackTree.Frame? {
        let count = node.ticks
        guard count > 0 else { return nil }
        let children = node.order.compactMap { frame(node.children[$0]!) }
        return CallStackTree.Frame(
            binaryName: node.frame.object, buildID: node.frame.buildID, address: node.frame.address,
            offsetIntoBinaryTextSegment: node.frame.offset, sampleCount: count, symbol: node.frame.function,
            subFrames: children.isEmpty ? nil : children)
    }

    func folded(_ pieces: [Piece]) -> [String: Int] {
        var result: [String: Int] = [:]
        // A piece with no stack (a thread switched out before its first sample) has nothing to
        // fold, and the trees have no frame to count it on: the views count the same samples.
        for piece in pieces where piece.ticks > 0 && !piece.span.frames.isEmpty {
            var parts = [piece.span.thread == mainThread ? piece.phase : "thread \(piece.span.thread)"]
            parts += piece.span.frames.reversed().map { FoldedStacks.clean($0.name) }
            result[parts.joined(separator: ";"), default: 0] += piece.ticks
        }
        return result
    }
}

extension String {
    /// The advice text with its first duration replaced (flags merged across callers).
    fileprivate func replacingFirstDuration(with ns: UInt64) -> String {
        guard let match = firstMatch(of: /\d+(?:\.\d+)? (?:ns|µs|ms|s)/) else { return self }
        var copy = self
        copy.replaceSubrange(match.range, with: DurationText.text(ns))
        return copy
    }
}
