/// Turns a run's sampled spans into what the report says: flags, call stack trees for the whole
/// launch and per phase, folded stacks, and the sampling summary. Pure: tested with plain spans.
///
/// Spans are cut at phase boundaries, so every piece of main-thread time belongs to one phase
/// (the innermost one running; time after `main` outside any hooked phase is `main`).
/// Sample counts in trees and folded stacks are time divided by the period, so a 120 ms wait
/// weighs what 120 ms of computing does, as in a wall-clock sampler.
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
        var durationNs: UInt64 { endNs - startNs }
    }

    /// Analyses `spans` (every sampled thread) of a launch that became ready at `readyNs` (ns
    /// from the spawn), with the run's phases.
    public func analyse(spans: [SampledSpan], phases: [LaunchPhase], readyNs: UInt64, lostRecords: Int = 0) -> Result {
        var sampling = LaunchSampling(rateHz: rateHz, periodNs: periodNs, lostRecords: lostRecords)
        guard readyNs >= periodNs else {
            sampling.note = LaunchSampling.tooShortNote(launchNs: readyNs, periodNs: periodNs, rateHz: rateHz)
            return Result(flags: [], callStackTree: nil, sampling: sampling, folded: [:])
        }
        let pieces = cut(spans.filter { $0.startNs < readyNs }, phases: phases, readyNs: readyNs)
        let main = pieces.filter { $0.span.thread == mainThread }
        sampling.sampleCount = spans.filter { $0.thread == mainThread && $0.startNs < readyNs }.count
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
        for phase in phaseOrder {
            let inPhase = main.filter { $0.phase == phase }
            flags += cpuFlags(inPhase, phase: phase)
            flags += blockedFlags(inPhase, phase: phase)
            flags += hangFlags(inPhase, phase: phase)
        }
        flags.sort { ($0.startNs ?? 0, $0.kind.rawValue) < ($1.startNs ?? 0, $1.kind.rawValue) }
        let tree = callStackTree(pieces)
        return Result(
            flags: flags, callStackTree: tree.callStacks.isEmpty ? nil : tree, sampling: sampling,
            folded: folded(pieces))
    }

    // MARK: Phases

    /// Cuts spans at phase boundaries and at readiness.
    func cut(_ spans: [SampledSpan], phases: [LaunchPhase], readyNs: UInt64) -> [Piece] {
        // Main-thread phases: the extended-launch tasks run on other threads.
        let ranges = phases.filter { $0.name != LaunchPhase.extendedLaunch && $0.durationNs > 0 }
        let mainNs = phases.first { $0.name == LaunchPhase.main }?.startNs
        var boundaries = Set<UInt64>([readyNs])
        for phase in ranges {
            boundaries.insert(phase.startNs)
            boundaries.insert(phase.endNs)
        }
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
                if stop > start {
                    pieces.append(Piece(span: span, phase: phase(at: start + (stop - start) / 2), startNs: start, endNs: stop))
                }
                start = stop
                index += 1
            }
        }
        return pieces
    }

    // MARK: Flags

    /// The frame blamed for a stack: the innermost one outside the C library and the loader.
    private func responsible(_ frames: [SampledFrame]) -> SampledFrame? {
        frames.first { !$0.isSystem } ?? frames.first
    }

    private struct Key: Hashable {
        var name: String
        var object: String
    }

    /// Call tree node for flag finding.
    private final class Node {
        var key: Key
        var frame: SampledFrame
        var durationNs: UInt64 = 0
        var firstNs: UInt64 = .max
        var children: [Key: Node] = [:]
        var order: [Key] = []

        init(key: Key, frame: SampledFrame) {
            self.key = key
            self.frame = frame
        }

        func child(_ frame: SampledFrame) -> Node {
            let key = Key(name: frame.name, object: frame.object)
            if let node = children[key] { return node }
            let node = Node(key: key, frame: frame)
            children[key] = node
            order.append(key)
            return node
        }
    }

    private func buildTree(_ pieces: [Piece]) -> Node {
        let root = Node(key: Key(name: "", object: ""), frame: SampledFrame(function: nil, object: "", address: 0, offset: 0))
        for piece in pieces {
            var node = root
            node.durationNs += piece.durationNs
            for frame in piece.span.frames.reversed().prefix(CallStackTree.maximumDepth) {
                node = node.child(frame)
                node.durationNs += piece.durationNs
                node.firstNs = min(node.firstNs, piece.startNs)
            }
        }
        return root
    }

    /// `cpu`: the deepest functions (outside libc) with at least the threshold of inclusive
    /// on-CPU time in the phase.
    private func cpuFlags(_ pieces: [Piece], phase: String) -> [LaunchFlag] {
        let root = buildTree(pieces.filter { $0.span.state == .onCPU })
        var found: [LaunchFlag] = []
        @discardableResult
        func visit(_ node: Node) -> Bool {
            var below = false
            for key in node.order where node.children[key]!.durationNs >= flagThresholdNs {
                if visit(node.children[key]!) { below = true }
            }
            guard !below, !node.frame.isSystem, node !== root else { return below }
            found.append(LaunchFlag(
                kind: .cpu, phase: phase, function: node.key.name, object: node.key.object,
                durationNs: node.durationNs, startNs: node.firstNs,
                advice: "\(node.key.name) computes for \(TextWaterfallRenderer.duration(node.durationNs)) on the main thread in \(phase): defer it until after the first frame, or move it off the main thread"))
            return true
        }
        visit(root)
        return merged(found)
    }

    /// `blocked`: a function (outside libc) that kept the main thread waiting in one system call
    /// for at least the threshold in the phase.
    private func blockedFlags(_ pieces: [Piece], phase: String) -> [LaunchFlag] {
        struct BlockKey: Hashable {
            var key: Key
            var syscall: String?
        }
        var totals: [BlockKey: (durationNs: UInt64, firstNs: UInt64)] = [:]
        var order: [BlockKey] = []
        for piece in pieces where piece.span.state == .blocked {
            guard let frame = responsible(piece.span.frames) else { continue }
            let key = BlockKey(key: Key(name: frame.name, object: frame.object), syscall: piece.span.syscall)
            if totals[key] == nil { order.append(key) }
            var total = totals[key] ?? (0, piece.startNs)
            total.durationNs += piece.durationNs
            totals[key] = total
        }
        return order.compactMap { key in
            guard let total = totals[key], total.durationNs >= flagThresholdNs else { return nil }
            let waitingIn = key.syscall.map { "in \($0)()" } ?? "off the CPU"
            return LaunchFlag(
                kind: .blocked, phase: phase, function: key.key.name, object: key.key.object,
                durationNs: total.durationNs, syscall: key.syscall, startNs: total.firstNs,
                advice: "\(key.key.name) waits \(TextWaterfallRenderer.duration(total.durationNs)) \(waitingIn) on the main thread in \(phase): do it asynchronously or on another thread, or defer it until after the first frame")
        }
    }

    /// `hang`: a stretch of at least 250 ms in which the main thread never left one function
    /// (busy or blocked), the deepest such function.
    private func hangFlags(_ pieces: [Piece], phase: String) -> [LaunchFlag] {
        struct Run {
            var startNs: UInt64
            var endNs: UInt64
            var depth: Int
            var blockedNs: UInt64 = 0
            var syscalls: [String: UInt64] = [:]
            var frame: SampledFrame
        }
        var open: [Key: Run] = [:]
        var closed: [(Key, Run)] = []
        var previousEnd: UInt64?
        func close(_ key: Key) {
            if let run = open.removeValue(forKey: key), run.endNs - run.startNs >= LaunchFlag.hangThresholdNs {
                closed.append((key, run))
            }
        }
        for piece in pieces.sorted(by: { $0.startNs < $1.startNs }) {
            if let previousEnd, piece.startNs > previousEnd {
                for key in Array(open.keys) { close(key) }  // a gap: nothing was sampled
            }
            previousEnd = piece.endNs
            var present = Set<Key>()
            for (depth, frame) in piece.span.frames.reversed().enumerated() where !frame.isSystem {
                let key = Key(name: frame.name, object: frame.object)
                guard present.insert(key).inserted else { continue }
                var run = open[key] ?? Run(startNs: piece.startNs, endNs: piece.startNs, depth: depth, frame: frame)
                run.endNs = piece.endNs
                if piece.span.state == .blocked {
                    run.blockedNs += piece.durationNs
                    if let syscall = piece.span.syscall { run.syscalls[syscall, default: 0] += piece.durationNs }
                }
                open[key] = run
            }
            for key in Array(open.keys) where !present.contains(key) { close(key) }
        }
        for key in Array(open.keys) { close(key) }
        // Of overlapping stretches keep the deepest function.
        let kept = closed.filter { key, run in
            !closed.contains { other in
                other.1.depth > run.depth && other.1.startNs < run.endNs && run.startNs < other.1.endNs
            }
        }
        return kept.map { key, run in
            let duration = run.endNs - run.startNs
            let syscall = run.blockedNs * 2 > duration ? run.syscalls.max { $0.value < $1.value }?.key : nil
            return LaunchFlag(
                kind: .hang, phase: phase, function: key.name, object: key.object, durationNs: duration,
                syscall: syscall, startNs: run.startNs,
                advice: "the main thread stayed in \(key.name) for \(TextWaterfallRenderer.duration(duration)) in \(phase) (a hang: 250 ms or more unresponsive): split the work, move it off the main thread, or defer it")
        }
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
        let count = Int((node.durationNs + periodNs / 2) / periodNs)
        guard count > 0 else { return nil }
        let children = node.order.compactMap { frame(node.children[$0]!) }
        return CallStackTree.Frame(
            binaryName: node.frame.object, buildID: node.frame.buildID, address: node.frame.address,
            offsetIntoBinaryTextSegment: node.frame.offset, sampleCount: count, symbol: node.frame.function,
            subFrames: children.isEmpty ? nil : children)
    }

    func folded(_ pieces: [Piece]) -> [String: Int] {
        var durations: [String: UInt64] = [:]
        for piece in pieces {
            var parts = [piece.span.thread == mainThread ? piece.phase : "thread \(piece.span.thread)"]
            parts += piece.span.frames.reversed().map { FoldedStacks.clean($0.name) }
            durations[parts.joined(separator: ";"), default: 0] += piece.durationNs
        }
        var result: [String: Int] = [:]
        for (stack, duration) in durations {
            let count = Int((duration + periodNs / 2) / periodNs)
            if count > 0 { result[stack] = count }
        }
        return result
    }
}

extension String {
    /// The advice text with its first duration replaced (flags merged across callers).
    fileprivate func replacingFirstDuration(with ns: UInt64) -> String {
        guard let match = firstMatch(of: /\d+(?:\.\d+)? (?:ns|µs|ms|s)/) else { return self }
        var copy = self
        copy.replaceSubrange(match.range, with: TextWaterfallRenderer.duration(ns))
        return copy
    }
}
