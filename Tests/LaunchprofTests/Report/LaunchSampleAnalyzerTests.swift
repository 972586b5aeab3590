import Foundation
import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport

/// The analysis of sampled spans, on scripted spans (the end-to-end tests are in SamplingTests).
@Suite("sample analysis")
struct LaunchSampleAnalyzerTests {
    static let ms: UInt64 = 1_000_000

    static func frame(_ name: String, _ object: String = "app", system: Bool = false) -> SampledFrame {
        SampledFrame(function: name, object: object, buildID: "b1", address: 0x1000, offset: 0x10, isSystem: system)
    }

    /// main → did_finish_launching → compute → crunch → (libc memcpy);
    /// main → will_finish_launching → wait → (libc poll). The handlers begin and end their phases.
    static let compute = [
        frame("memcpy", "libc.so.6", system: true), frame("crunch"), frame("compute"), frame("did_finish_launching"), frame("main"),
    ]
    static let wait = [frame("__poll", "libc.so.6", system: true), frame("wait"), frame("will_finish_launching"), frame("main")]
    static let small = [frame("small"), frame("did_finish_launching"), frame("main")]
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

    @Test func flagsTheHandlersCalleeWithItsPathPhaseAndSyscall() {
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: Self.spans(), phases: Self.phases, readyNs: 210 * Self.ms)
        let cpu = result.flags.filter { $0.kind == .cpu }
        #expect(cpu.map(\.function) == ["compute"], "the callee of the phase's handler, not the handler or crunch")
        #expect(cpu.first?.path == ["compute", "crunch"], "down to the innermost hot function outside libc")
        #expect(cpu.first?.durationNs == 60 * Self.ms, "on-CPU time only: the preemption is not computing")
        #expect(cpu.first?.phase == "didFinishLaunching")
        #expect(cpu.first?.startNs == 110 * Self.ms)
        let blocked = result.flags.filter { $0.kind == .blocked }
        #expect(blocked.count == 1)
        #expect(blocked.first?.function == "wait")
        #expect(blocked.first?.path == nil, "the waiting function is the handler's callee")
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
        #expect(hangs.map(\.function) == ["compute"], "the handler's callee, not main or the handler")
        #expect(hangs.first?.path == ["compute", "crunch"], "down to the deepest function of the whole stretch")
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
        #expect(result.folded["didFinishLaunching;main;did_finish_launching;compute;crunch;memcpy"] == 70)
        #expect(result.folded["willFinishLaunching;main;will_finish_launching;wait;__poll"] == 80)
        #expect(result.folded["thread 9;main;did_finish_launching;small"] == 10)
        #expect(result.sampling.phaseCallStackTrees.map(\.phase) == ["willFinishLaunching", "didFinishLaunching"])
        var folded = FoldedStacks()
        folded.add(result.folded)
        folded.add(["a;b": 2])
        #expect(folded.text.hasPrefix("a;b 2\ndidFinishLaunching;main;did_finish_launching;compute;crunch;memcpy 70\n"))
    }

    /// 1 ms on-CPU samples of `frames` from `startMs`, `count` of them.
    static func samples(_ frames: [SampledFrame], from startMs: UInt64, count: Int) -> [SampledSpan] {
        (0..<UInt64(count)).map { index in
            SampledSpan(thread: 7, startNs: (startMs + index) * ms, endNs: (startMs + index + 1) * ms, state: .onCPU, frames: frames)
        }
    }

    static let start = [frame("__libc_start_call_main", "libc.so.6", system: true), frame("_start")]

    /// A helper shared by a heavy caller and a light one: the heavy caller is flagged, with the
    /// helper at the end of its path, never the helper. The phase's hooks are called by main
    /// (its stack just outside the phase holds main only).
    @Test func aSharedHelperIsBlamedOnItsHeavyCaller() {
        let now = Self.frame("now")
        let heavy = [Self.frame("clock_gettime", "[vdso]", system: true), now, Self.frame("crunch"), Self.frame("parse_catalog"), Self.frame("main")] + Self.start
        let light = [now, Self.frame("stamp_start"), Self.frame("main")] + Self.start
        let outside = [Self.frame("send", "libc.so.6", system: true), Self.frame("main")] + Self.start
        let spans = Self.samples(outside, from: 9, count: 1) + Self.samples(light, from: 10, count: 2)
            + Self.samples(heavy, from: 12, count: 150) + Self.samples(outside, from: 162, count: 1)
        let phases = [LaunchPhase(name: "didFinishLaunching", startNs: 10 * Self.ms, durationNs: 152 * Self.ms)]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 170 * Self.ms)
        #expect(result.flags.map(\.function) == ["parse_catalog"])
        #expect(result.flags.first?.path == ["parse_catalog", "crunch", "now"])
        #expect(result.flags.first?.chain == "parse_catalog → crunch → now")
        #expect(result.flags.first?.durationNs == 150 * Self.ms)
    }

    /// A handler that works before and after its phase (so the stacks just outside the phase
    /// hold it) is the phase frame, whatever its name.
    @Test func aHandlerWorkingAroundItsPhaseIsThePhaseFrame() {
        let handler = Self.frame("start_ui")
        func stack(_ names: String...) -> [SampledFrame] { names.reversed().map { Self.frame($0) } + [handler, Self.frame("main")] + Self.start }
        let spans = Self.samples(stack("load_prefs"), from: 5, count: 5) + Self.samples(stack("parse_catalog", "crunch"), from: 10, count: 40)
            + Self.samples(stack("draw"), from: 50, count: 5)
        let phases = [
            LaunchPhase(name: "main", startNs: 1 * Self.ms, durationNs: 0),
            LaunchPhase(name: "didFinishLaunching", startNs: 10 * Self.ms, durationNs: 40 * Self.ms),
        ]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 55 * Self.ms)
        #expect(result.flags.map(\.function) == ["parse_catalog"], "\(result.flags)")
        #expect(result.flags.first?.path == ["parse_catalog", "crunch"])
    }

    /// A phase stamped late (a hook line with `-` read by a busy launchprof) begins inside the
    /// heavy callee, so the last stack before it holds the callee too; the phase's own last
    /// stack (main writing its results) still ends outside it.
    @Test func aLateStampedPhaseStillFindsItsFrame() {
        let heavy = [Self.frame("now"), Self.frame("crunch"), Self.frame("parse_catalog"), Self.frame("main")] + Self.start
        let tail = [Self.frame("write", "libc.so.6", system: true), Self.frame("write_truth"), Self.frame("main")] + Self.start
        let spans = Self.samples(heavy, from: 10, count: 60) + Self.samples(tail, from: 70, count: 1)
        let phases = [
            LaunchPhase(name: "main", startNs: 5 * Self.ms, durationNs: 0),
            LaunchPhase(name: "didFinishLaunching", startNs: 30 * Self.ms, durationNs: 42 * Self.ms),
        ]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 80 * Self.ms)
        // The 20 ms before the late stamp are main's (the phase of time outside hooked phases).
        #expect(result.flags.map(\.phase) == ["main", "didFinishLaunching"])
        #expect(result.flags.map(\.function) == ["parse_catalog", "parse_catalog"], "\(result.flags)")
        let late = result.flags.last
        #expect(late?.path == ["parse_catalog", "crunch", "now"])
        #expect(late?.durationNs == 40 * Self.ms)
    }

    /// Under launchprof's app framework the phase frame is the delegate method the framework
    /// called (whatever its name), so the flag names what the delegate called.
    @Test func theAppFrameworkIsSkipped() {
        let stack = [
            Self.frame("spin"), Self.frame("Demo.loadFonts() -> ()"), Self.frame("Demo.Delegate.launched() -> ()"),
            Self.frame("closure #3 in LaunchprofApp.LaunchprofApplication.run() -> ()"),
            Self.frame("LaunchprofApp.LaunchHooks.measure(Swift.String, () -> ()) -> ()"),
            Self.frame("LaunchprofApp.LaunchprofApplication.run() -> ()"), Self.frame("main"),
        ] + Self.start
        let outside = [Self.frame("LaunchprofApp.LaunchHooks.send() -> ()"), Self.frame("LaunchprofApp.LaunchprofApplication.run() -> ()"), Self.frame("main")] + Self.start
        let spans = Self.samples(outside, from: 9, count: 1) + Self.samples(stack, from: 10, count: 40)
        let phases = [LaunchPhase(name: "didFinishLaunching", startNs: 10 * Self.ms, durationNs: 40 * Self.ms)]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 60 * Self.ms)
        #expect(result.flags.map(\.function) == ["Demo.loadFonts() -> ()"])
        #expect(result.flags.first?.path == ["Demo.loadFonts() -> ()", "spin"])
    }

    /// Before main the phase frame is the loader's or libc's call of the initializer: the flag
    /// names the initializer.
    @Test func anInitializerIsItsOwnOwner() {
        let stack = [Self.frame("spin"), Self.frame("warm_cache"), Self.frame("setup"), Self.frame("call_init", "libc.so.6", system: true)] + Self.start
        let spans = Self.samples(stack, from: 2, count: 30)
        let phases = [LaunchPhase(name: "program.init", startNs: 1 * Self.ms, durationNs: 40 * Self.ms)]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 60 * Self.ms)
        #expect(result.flags.map(\.function) == ["setup"])
        #expect(result.flags.first?.path == ["setup", "warm_cache", "spin"])
    }

    /// Work the handler does itself — in its own body or straight in the C library (a memcpy, a
    /// 300 ms nanosleep) — is the handler's: the flags name it, not the library.
    @Test func theHandlersOwnLibraryCallsAreItsOwn() {
        let handler = Self.frame("did_finish_launching")
        let copy = [Self.frame("memcpy", "libc.so.6", system: true), handler, Self.frame("main")] + Self.start
        let sleep = [Self.frame("__nanosleep", "libc.so.6", system: true), handler, Self.frame("main")] + Self.start
        var spans = Self.samples(copy, from: 10, count: 30)
        spans.append(SampledSpan(thread: 7, startNs: 40 * Self.ms, endNs: 340 * Self.ms, state: .blocked, syscall: "clock_nanosleep", frames: sleep))
        let phases = [LaunchPhase(name: "didFinishLaunching", startNs: 10 * Self.ms, durationNs: 330 * Self.ms)]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 350 * Self.ms)
        let cpu = result.flags.filter { $0.kind == .cpu }
        #expect(cpu.map(\.function) == ["did_finish_launching"], "\(result.flags)")
        #expect(cpu.first?.durationNs == 30 * Self.ms && cpu.first?.path == nil)
        let hang = result.flags.filter { $0.kind == .hang }
        #expect(hang.map(\.function) == ["did_finish_launching"], "\(result.flags)")
        #expect(hang.first?.durationNs == 330 * Self.ms)
        #expect(result.flags.filter { $0.kind == .blocked }.map(\.function) == ["did_finish_launching"])
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
        #expect(try LaunchRunJSONTests.roundTrip(run) == run)
    }

    /// A prewarmed launch frozen at main for 1 s: the stack the sampler saw while it was frozen
    /// (main, off the CPU) is no work, no wait and no hang. Only what the program did before
    /// the freeze and after the resume counts; the hold is reported apart.
    @Test func aPrewarmHoldIsNoHangNoWaitAndNoSample() throws {
        let main = [Self.frame("main")] + Self.start
        let hold: Range<UInt64> = (12 * Self.ms)..<(1_012 * Self.ms)
        var spans = Self.samples(main, from: 2, count: 10)
        // Frozen: one long off-CPU stretch in main (the freezer's stop), cut into a few records.
        for part in 0..<4 {
            let start = hold.lowerBound + UInt64(part) * 250 * Self.ms
            spans.append(SampledSpan(thread: 7, startNs: start, endNs: start + 250 * Self.ms, state: .blocked, syscall: "ptrace_stop", frames: main))
        }
        spans += Self.samples(Self.compute, from: 1_012, count: 60)
        let phases = [
            LaunchPhase(name: "main", startNs: 12 * Self.ms, durationNs: 0),
            LaunchPhase(name: "didFinishLaunching", startNs: 1_012 * Self.ms, durationNs: 60 * Self.ms),
        ]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        // The check can fail: without the hold, the freeze reads as a 1 s hang and wait in main.
        let unaware = analyzer.analyse(spans: spans, phases: phases, readyNs: 1_072 * Self.ms)
        #expect(unaware.flags.contains { $0.kind == .hang && $0.phase == "main" })
        #expect(unaware.flags.contains { $0.kind == .blocked && $0.phase == "main" })

        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: 1_072 * Self.ms, frozen: hold)
        #expect(result.flags.map(\.kind) == [.cpu], "the work after the resume only: \(result.flags)")
        #expect(result.flags.first?.function == "compute")
        #expect(result.sampling.frozenNs == 1_000 * Self.ms)
        #expect(result.sampling.blockedNs == 0 && result.sampling.onCPUNs == 70 * Self.ms)
        #expect(result.sampling.sampleCount == 70, "the samples taken while frozen are not counted")
        let tree = try #require(result.callStackTree)
        #expect(tree.callStacks[0].callStackRootFrames.reduce(0) { $0 + $1.sampleCount } == 70)
        #expect(result.folded.values.reduce(0, +) == 70)
        #expect(!result.folded.keys.contains { $0.contains("ptrace") })
    }

    /// Trees, phase trees and folded stacks count the same ticks: every parent is its children
    /// plus its own, and each view adds up to the same total, whatever the spans' lengths and
    /// the phase boundaries (a rounding per node or per line drifted apart: 15 vs 19 samples).
    @Test func everyViewCountsTheSameSamples() throws {
        var spans: [SampledSpan] = []
        var time: UInt64 = 1_300_000
        let stacks = [Self.compute, Self.wait, Self.small, [Self.frame("crunch")] + Self.compute]
        for index in 0..<97 {
            // Lengths of 0.3 to 2.6 periods, never on a period boundary.
            let length = UInt64(300_000 + (index * 7_919) % 2_300_000)
            spans.append(SampledSpan(thread: 7, startNs: time, endNs: time + length, state: index % 5 == 0 ? .blocked : .onCPU, frames: stacks[index % 4]))
            time += length
        }
        let phases = [
            LaunchPhase(name: "main", startNs: 1_000_000, durationNs: 0),
            LaunchPhase(name: "willFinishLaunching", startNs: 1_000_000, durationNs: 33_333_333),
            LaunchPhase(name: "didFinishLaunching", startNs: 34_333_333, durationNs: time - 34_333_333),
        ]
        let analyzer = LaunchSampleAnalyzer(rateHz: 1000, flagThresholdNs: 20 * Self.ms, mainThread: 7)
        let result = analyzer.analyse(spans: spans, phases: phases, readyNs: time)
        let roots = try #require(result.callStackTree).callStacks[0].callStackRootFrames
        let treeTotal = roots.reduce(0) { $0 + $1.sampleCount }
        #expect(treeTotal == result.folded.values.reduce(0, +))
        let phaseTotal = result.sampling.phaseCallStackTrees.flatMap { $0.callStackTree.callStacks[0].callStackRootFrames }
            .reduce(0) { $0 + $1.sampleCount }
        #expect(phaseTotal == treeTotal)
        // One tick per period from the spawn: the launch's ticks from the first sample to readiness.
        #expect(treeTotal == Int((time + Self.ms - 1) / Self.ms) - Int((1_300_000 + Self.ms - 1) / Self.ms))
        func check(_ frame: CallStackTree.Frame) {
            let children = (frame.subFrames ?? []).reduce(0) { $0 + $1.sampleCount }
            #expect(children <= frame.sampleCount, "\(frame.symbol ?? "?"): children \(children) > \(frame.sampleCount)")
            frame.subFrames?.forEach(check)
        }
        roots.forEach(check)
    }
}
