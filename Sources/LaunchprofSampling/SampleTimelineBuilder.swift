import CLaunchprof
import LaunchprofELF
import LaunchprofReport

/// Unwinds and names a launch's samples and turns them, with the switch records, into spans:
/// what each thread was doing (on CPU, runnable, blocked and in which system call, named from
/// the switch-out's kernel frames) from when to when, with its stack.
///
/// Per thread: an on-CPU sample ends a stretch on the CPU with its stack; a switch-out ends one
/// with the stack the switch-out sample took, and starts an off-CPU stretch (runnable when
/// preempted, else blocked) with that same stack, ended by the switch-in. Records are handled
/// in order, so a library mapped during the launch is known from its first sample on.
public final class SampleTimelineBuilder {
    private let symbolizer: StackSymbolizer
    private let kernelSymbols: KernelSymbols
    private let unwinder: StackUnwinder
    private var addresses = [UInt64](repeating: 0, count: CallStackTree.maximumDepth)
    /// Samples unwound in the last `spans` call, their frames, and the time unwinding them took.
    public private(set) var unwoundSamples = 0
    public private(set) var unwoundFrames = 0
    public private(set) var unwindNs: UInt64 = 0

    /// `libunwindOnly`: without launchprof's cached call-frame rules (to compare the two).
    public init?(symbolizer: StackSymbolizer, kernelSymbols: KernelSymbols = .shared, libunwindOnly: Bool = false) {
        guard let unwinder = StackUnwinder(symbolizer: symbolizer, libunwindOnly: libunwindOnly) else { return nil }
        self.symbolizer = symbolizer
        self.kernelSymbols = kernelSymbols
        self.unwinder = unwinder
    }

    private struct ThreadState {
        var cursor: UInt64?
        var onCPU = true
        var offState = SampledSpan.State.blocked
        var offStack: [SampledFrame] = []
        var offSyscall: String?
        var offStackIsGuess = false
        var lastStack: [SampledFrame] = []
        var pendingOut: (frames: [SampledFrame], syscall: String?)?
    }

    /// Spans of every sampled thread, times in ns from `originNs` (the spawn).
    public func spans(_ capture: LaunchSampler.Capture, originNs: UInt64) -> (spans: [SampledSpan], lostRecords: Int) {
        reset()
        for mapping in capture.initialMappings { unwinder.add(mapping) }
        var threads: [Int32: ThreadState] = [:]
        var spans: [SampledSpan] = []
        var lost = 0
        var lastTime: UInt64 = 0
        func relative(_ time: UInt64) -> UInt64 { time > originNs ? time - originNs : 0 }
        func emit(_ thread: Int32, _ start: UInt64, _ end: UInt64, _ state: SampledSpan.State, _ syscall: String?, _ frames: [SampledFrame]) {
            guard end > start else { return }
            spans.append(SampledSpan(
                thread: thread, startNs: relative(start), endNs: relative(end), state: state,
                syscall: syscall, frames: frames))
        }
        for record in capture.records {
            switch record {
            case .mapping(_, let start, let length, let offset, let path, let executable):
                guard executable, path.hasPrefix("/") else { continue }
                unwinder.add(StackSymbolizer.Mapping(start: start, end: start &+ length, offset: offset, path: path))
            case .lost(let count):
                lost += Int(clamping: count)
            case .stack(let sample):
                lastTime = max(lastTime, sample.timeNs)
                let frames = symbolize(sample)
                let syscall = sample.kernelFrames.isEmpty ? nil : kernelSymbols.syscallName(kernelFrames: sample.kernelFrames)
                var state = threads[sample.thread, default: ThreadState()]
                switch sample.kind {
                case .onCPU:
                    if let cursor = state.cursor, state.onCPU {
                        emit(sample.thread, cursor, sample.timeNs, .onCPU, nil, frames)
                    }
                    if state.onCPU { state.cursor = sample.timeNs }
                    state.lastStack = frames
                case .switchOut:
                    if state.onCPU {
                        state.pendingOut = (frames, syscall)
                    } else if state.offStackIsGuess {
                        // The switch record came first: the stack belongs to the stretch it opened.
                        state.offStack = frames
                        state.offStackIsGuess = false
                        if state.offState == .blocked { state.offSyscall = syscall }
                    }
                }
                threads[sample.thread] = state
            case .switched(let thread, let time, let out, let preempted):
                lastTime = max(lastTime, time)
                var state = threads[thread, default: ThreadState()]
                if out {
                    let pending = state.pendingOut
                    let frames = pending?.frames ?? state.lastStack
                    if let cursor = state.cursor, state.onCPU { emit(thread, cursor, time, .onCPU, nil, frames) }
                    state.onCPU = false
                    state.cursor = time
                    state.offState = preempted ? .runnable : .blocked
                    state.offStack = frames
                    state.offStackIsGuess = pending == nil
                    state.offSyscall = preempted ? nil : pending?.syscall
                    state.pendingOut = nil
                    if !frames.isEmpty { state.lastStack = frames }
                } else {
                    if let cursor = state.cursor, !state.onCPU {
                        emit(thread, cursor, time, state.offState, state.offSyscall, state.offStack)
                    }
                    state.onCPU = true
                    state.cursor = time
                }
                threads[thread] = state
            }
        }
        // Close what was still open when the records end (the launch was ended).
        for (thread, state) in threads.sorted(by: { $0.key < $1.key }) {
            guard let cursor = state.cursor, lastTime > cursor else { continue }
            emit(
                thread, cursor, lastTime, state.onCPU ? .onCPU : state.offState, state.onCPU ? nil : state.offSyscall,
                state.onCPU ? state.lastStack : state.offStack)
        }
        spans.sort { ($0.startNs, $0.thread) < ($1.startNs, $1.thread) }
        return (spans, lost)
    }

    private func reset() {
        unwoundSamples = 0
        unwoundFrames = 0
        unwindNs = 0
        unwinder.reset()
    }

    /// The sample's return addresses into `addresses`, innermost first.
    private func unwind(_ sample: StackSample) -> Int {
        sample.registers.withUnsafeBufferPointer { registers in
            sample.stack.withUnsafeBytes { stack in
                addresses.withUnsafeMutableBufferPointer { unwinder.unwind(registers: registers, stack: stack, output: $0) }
            }
        }
    }

    /// The sample's frames, named.
    private func symbolize(_ sample: StackSample) -> [SampledFrame] {
        guard sample.registers.count == Int(LP_SAMPLE_REGISTER_COUNT) else { return [] }
        let started = lp_now_ns()
        var count = Int32(unwind(sample))
        unwindNs += lp_now_ns() - started
        // An address no user code can have (x86-64's user half ends below 2^56 even with 5-level
        // paging) ends the stack: an unwind that went astray — through a uretprobe's trampoline,
        // which holds the real return address in the kernel (runtime probes on GTK's calls) —
        // would otherwise name garbage, which a report's reader rightly refuses.
        if let astray = (0..<Int(count)).first(where: { addresses[$0] >= 1 << 56 }) { count = Int32(astray) }
        if count == 0 {
            count = 1
            addresses[0] = sample.registers[Int(LP_SAMPLE_REGISTER_IP)]
        }
        unwoundSamples += 1
        unwoundFrames += Int(count)
        var frames: [SampledFrame] = []
        frames.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let address = addresses[index]
            frames.append(symbolizer.frame(address, in: unwinder.mapping(containing: address), isReturnAddress: index > 0))
        }
        return frames
    }
}
