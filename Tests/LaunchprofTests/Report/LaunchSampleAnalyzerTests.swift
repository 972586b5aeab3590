import Foundation
import Testing

@testable import LaunchprofReport

/// The analysis of sampled spans, on scripted spans (the end-to-end tests are in SamplingTests).
@Suite("sample analysis")
struct LaunchSampleAnalyzerTests {
    static let ms: UInt64 = 1_000_000

    static func frame(_ name: String, _ object: String = "app", system: Bool = false) -> SampledFrame {
        SampledFrame(function: name, object: object, buildID: "b1", address: 0x1000, offset: 0x10, isSystem: system)
    }

    /// main → did → compute → (libc memcpy); main → will → wait → (libc poll).
    static let compute = [frame("memcpy", "libc.so.6", system: true), frame("compute"), frame("did"), frame("main")]
    static let wait = [frame("__poll", "libc.so.6", system: true), frame("wait"), frame("will"), frame("main")]
    static let small = [frame("small"), frame("did"), frame("main")]
    static let phases = [
        LaunchPhase(name: "main", startNs: 10 * ms, durationNs: 0),
        LaunchPhase(name: "willFinishLaunching", startNs: 10 * ms, durationNs: 100 * ms),
        LaunchPhase(name: "didFinishLaunching", startNs: 110 * ms, durationNs: 100 * ms),
    ]

    static func spans(thread: Int32 = 7) -> [SampledSpan] {
        var spans = [SampledSpan(thread: thread, startNs: 15 * ms, endNs: 95 * ms, state: .blocked, syscall: "poll", frames: wait)]
        // 60 ms of computing in 1 ms samples, with a 10 ms preemption inside, then 5 ms small.
        var time = 110 * ms
        for index in 0..<60 {
            spans.append(SampledSpan(thread: thread, startNs: time, endNs: time + ms, state: .onCPU, frames: compute))
            time += ms
            if index == 30 {
                spans.append(SampledSpan(thread: thread, startNs: time, endNs: time + 10 * ms, state: .runnable, frames: compute))
                time += 10 * ms
            }
        }
        for _ in 0..<5 {
            spans.append(SampledSpan(thread: thread, startNs: time, endNs: time + ms, state: .onCPU, frames: small))
            time += ms
        }
        return spans
    }

    @Test func flagsTheDeepestAppFunctionWithItsPhaseAndSyscall() {
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: Self.spans(), phases: Self.phases, readyNs: 210 * Self.ms)
        let cpu = result.flags.filter { $0.kind == .cpu }
        #expect(cpu.map(\.function) == ["compute"], "libc's memcpy is blamed on its caller; did is not the deepest")
        #expect(cpu.first?.durationNs == 60 * Self.ms, "on-CPU time only: the preemption is not computing")
        #expect(cpu.first?.phase == "didFinishLaunching")
        #expect(cpu.first?.startNs == 110 * Self.ms)
        let blocked = result.flags.filter { $0.kind == .blocked }
        #expect(blocked.count == 1)
        #expect(blocked.first?.function == "wait")
        #expect(blocked.first?.syscall == "poll")
        #expect(blocked.first?.durationNs == 80 * Self.ms)
        #expect(blocked.first?.phase == "willFinishLaunching")
        #expect(!result.flags.contains { $0.function == "small" })
        #expect(!result.flags.contains { $0.kind == .hang }, "nothing lasted 250 ms")
        #expect(result.sampling.onCPUNs == 65 * Self.ms)
        #expect(result.sampling.runnableNs == 10 * Self.ms)
        #expect(result.sampling.blockedNs == 80 * Self.ms)
    }

    @Test func thresholdDecides() {
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 4 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: Self.spans(), phases: Self.phases, readyNs: 210 * Self.ms)
        #expect(result.flags.contains { $0.kind == .cpu && $0.function == "small" && $0.durationNs == 5 * Self.ms })
    }

    @Test func hangIsAStretchOf250msInOneFunction() {
        var spans: [SampledSpan] = []
        for index in 0..<300 {
            let start = UInt64(20 + index) * Self.ms
            spans.append(SampledSpan(
                thread: 7, startNs: start, endNs: start + Self.ms, state: index % 3 == 0 ? .blocked : .onCPU,
                syscall: index % 3 == 0 ? "read" : nil, frames: Self.compute))
        }
        let phases = [LaunchPhase(name: "didFinishLaunching", startNs: 10 * Self.ms, durationNs: 400 * Self.ms)]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 410 * Self.ms)
        let hangs = result.flags.filter { $0.kind == .hang }
        #expect(hangs.map(\.function) == ["compute"], "the deepest function of the stretch, not main or did")
        #expect(hangs.first?.durationNs == 300 * Self.ms)
        #expect(hangs.first?.syscall == nil, "mostly computing")
    }

    @Test func treesAndFoldedStacksCountTimeInPeriods() {
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let spans = Self.spans() + [SampledSpan(thread: 9, startNs: 120 * Self.ms, endNs: 130 * Self.ms, state: .onCPU, frames: Self.small)]
        let result = analyzer.analyse(spans: spans, phases: Self.phases, readyNs: 210 * Self.ms)
        let tree = try! #require(result.callStackTree)
        #expect(tree.callStacks.count == 2)
        #expect(tree.callStacks[0].threadAttributed && !tree.callStacks[1].threadAttributed)
        let main = tree.callStacks[0].callStackRootFrames
        #expect(main.map(\.symbol) == ["main"])
        #expect(main.first?.sampleCount == 155, "80 ms waiting + 70 ms computing or preempted + 5 ms small, at 1 ms")
        #expect(main.first?.launchprofBuildID == "b1")
        #expect(result.folded["didFinishLaunching;main;did;compute;memcpy"] == 70)
        #expect(result.folded["willFinishLaunching;main;will;wait;__poll"] == 80)
        #expect(result.folded["thread 9;main;did;small"] == 10)
        #expect(result.sampling.phaseCallStackTrees.map(\.phase) == ["willFinishLaunching", "didFinishLaunching"])
        var folded = FoldedStacks()
        folded.add(result.folded)
        folded.add(["a;b": 2])
        #expect(folded.text.hasPrefix("a;b 2\ndidFinishLaunching;main;did;compute;memcpy 70\n"))
    }

    @Test func shorterThanAPeriodIsTooShortToSample() {
        let analyzer = LaunchSampleAnalyzer(rateHz: 100, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: [], phases: [], readyNs: 3 * Self.ms)
        #expect(result.sampling.note?.hasPrefix("too short to sample: the launch took 3.00 ms") == true)
        #expect(result.callStackTree == nil && result.flags.isEmpty)
    }

    @Test func runWithSamplingEncodesLikeFoundation() throws {
        var run = LaunchRun(index: 0, pid: 1, exitStatus: RunExit(code: 0), phases: Self.phases, metrics: LaunchMetrics())
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: Self.spans(), phases: Self.phases, readyNs: 210 * Self.ms)
        run.flags = result.flags
        run.callStackTree = result.callStackTree
        run.sampling = result.sampling
        #expect(run.jsonBytes() == (try LaunchRunJSONTests.foundation(run)))
    }
}
