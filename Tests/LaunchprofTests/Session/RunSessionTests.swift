import Foundation
import LaunchprofReport
import Testing
@testable import LaunchprofCore
@testable import LaunchprofTracing

/// The session layer on plain values: a `ScriptedTracer` plays the launches, the session's own
/// logic (re-runs, warnings, observer accounting, outcomes, prewarm pairing) does the rest.
@Suite("session: logic above the tracer", .serialized)
struct RunSessionTests {
    /// A real ELF file the session has not analysed (its program is /bin/true).
    private let otherImage = URL(fileURLWithPath: "/usr/bin/env").resolvingSymlinksInPath().path

    @Test("a run that met an image not analysed yet is made again, once that image is analysed")
    func rerunOnNewImages() throws {
        var first = SessionScript.launch(pid: 4_001)
        first.unplannedImages = [otherImage]
        // The repeat meets the same image again: now analysed, it triggers no third launch.
        var second = SessionScript.launch(pid: 4_002)
        second.unplannedImages = [otherImage]
        let tracer = ScriptedTracer([first, second, SessionScript.launch(pid: 4_003)])
        let session = try RunSession(configuration: SessionScript.configuration(runs: 2), tracer: tracer)
        let runs = try SessionScript.runs(session)
        #expect(runs.map(\.pid) == [4_002, 4_003])
        #expect(runs.map(\.index) == [0, 1])
        #expect(tracer.remaining == 0)
        // Every launch asked for the same program with the session's plan of it.
        #expect(Set(tracer.requests.map(\.executable)).count == 1)
        #expect(tracer.requests.allSatisfy { $0.plan?.programPath == session.imagePath })
    }

    @Test("an exec'd file that is no ELF image is not analysed and does not repeat the run")
    func noRerunForUnreadableImages() throws {
        var launch = SessionScript.launch(pid: 4_011)
        launch.unplannedImages = ["/etc/hostname-\(UUID().uuidString)"]
        let tracer = ScriptedTracer([launch, SessionScript.launch(pid: 4_012)])
        let runs = try SessionScript.runs(try RunSession(configuration: SessionScript.configuration(), tracer: tracer))
        #expect(runs.map(\.pid) == [4_011])
        #expect(tracer.remaining == 1)
    }

    @Test("left-behind processes and lost probe hits become warnings naming them")
    func warnings() throws {
        var launch = SessionScript.launch(pid: 4_021)
        launch.leftoverProcesses = [4_031, 4_032]
        launch.lostSamples = 5
        let runs = try SessionScript.runs(
            try RunSession(configuration: SessionScript.configuration(), tracer: ScriptedTracer([launch])))
        let run = try #require(runs.first)
        let left = try #require(run.warnings.first { $0.code == .processesLeftBehind })
        #expect(left.message.contains("2 process(es)") && left.message.contains("4031, 4032"), "\(left.message)")
        let lost = try #require(run.warnings.first { $0.code == .observerSamplesLost })
        #expect(lost.message.hasPrefix("5 probe hit(s)"), "\(lost.message)")
        // A clean launch has neither.
        let clean = try SessionScript.runs(
            try RunSession(configuration: SessionScript.configuration(), tracer: ScriptedTracer([SessionScript.launch()])))
        #expect(clean.first?.warnings.isEmpty == true)
    }

    @Test("a span hits were lost inside is absent with the loss's window; the run's other spans stay measured")
    func lostHitsInsideASpan() throws {
        var launch = SessionScript.launch(pid: 4_025)
        // 4 hits dropped between 1.46 and 1.48 ms: inside program.init (1.45 to 1.5 ms).
        launch.events.insert(.hitsLost(count: 4, fromNs: 1_460_000, toNs: 1_480_000), at: launch.events.count - 2)
        launch.lostSamples = 4
        let runs = try SessionScript.runs(
            try RunSession(configuration: SessionScript.configuration(), tracer: ScriptedTracer([launch])))
        let run = try #require(runs.first)
        // The session's own "may be among them" note does not replace the window.
        #expect(run.absent == [AbsentPhase(
            phase: LaunchPhase.programInit, reason: "its end may have been lost (4 hit(s) lost between 1.46 and 1.48 ms)")])
        #expect(run.phases.first { $0.name == LaunchPhase.loaderRelocate }?.durationNs == 400_000)
        #expect(run.phases.first { $0.name == LaunchPhase.loaderInit }?.durationNs == 150_000)
        #expect(run.metrics.timeToMainNs == 1_500_000)
        let lost = try #require(run.warnings.first { $0.code == .observerSamplesLost })
        #expect(lost.message == "4 probe hit(s) found the uprobe ring buffer full; boundaries may be missing")
    }

    @Test("the observer's costs land in the phases they fell in; the tracer's pause is kept")
    func observerAccounting() throws {
        var launch = SessionScript.launch(pid: 4_041)
        launch.observerCosts = [
            ObserverCost(atNs: 400_000, costNs: 1_000),  // loader.map starts here
            ObserverCost(atNs: 899_999, costNs: 2_000),  // still loader.map
            ObserverCost(atNs: 900_000, costNs: 4_000),  // loader.relocate
            ObserverCost(atNs: 1_800_000, costNs: 8_000),  // inside restoreState (a hook phase)
        ]
        launch.pauseNs = 7_777
        let runs = try SessionScript.runs(
            try RunSession(configuration: SessionScript.configuration(), tracer: ScriptedTracer([launch])))
        let run = try #require(runs.first)
        func observer(_ name: String) -> UInt64? { run.phases.first { $0.name == name }?.observerNs }
        #expect(observer("exec") == 0)
        #expect(observer("loader.map") == 3_000)
        #expect(observer("loader.relocate") == 4_000)
        #expect(observer("restoreState") == 8_000)
        #expect(run.tracerPauseNs == 7_777)
        #expect(run.phases.first { $0.name == "main" }?.observerNs == nil, "an instant gets no cost")
    }

    @Test("ObserverAccounting: [start, end) spans, nested phases each count, costs before the spawn ignored")
    func accountingOnValues() {
        let phases = [
            LaunchPhase(name: "a", startNs: 0, durationNs: 100),
            LaunchPhase(name: "b", startNs: 100, durationNs: 100),
            LaunchPhase(name: "outer", startNs: 50, durationNs: 200),
            LaunchPhase(name: "instant", startNs: 100, durationNs: 0),
        ]
        let costs = [
            ObserverCost(atNs: 999, costNs: 1), ObserverCost(atNs: 1_000, costNs: 10),
            ObserverCost(atNs: 1_100, costNs: 20), ObserverCost(atNs: 1_199, costNs: 40),
            ObserverCost(atNs: 1_300, costNs: 80),
        ]
        let assigned = ObserverAccounting.assign(costs, spawnedAtNs: 1_000, to: phases)
        #expect(assigned.map(\.observerNs) == [10, 60, 60, nil])
    }

    @Test("outcomes: a crash, launchprof's own ending, a tracer that fails")
    func outcomes() throws {
        let crash = SessionScript.launch(pid: 4_051, exit: .signaled(signal: 11, coreDumped: true))
        var early = SessionScript.launch(pid: 4_052, exit: .exited(code: 3))
        early.hookLines = []  // no first frame: ready at its exit, with a failing status
        let ended = SessionScript.launch(pid: 4_053, exit: .exitedWhenEnded(code: 15, reason: "launch complete"))
        let tracer = ScriptedTracer([crash, early, ended])
        let runs = try SessionScript.runs(try RunSession(configuration: SessionScript.configuration(runs: 3), tracer: tracer))
        #expect(runs.map(\.resolvedOutcome.kind) == [.crashed, .exitedEarly, .completed])
        #expect(runs[0].resolvedOutcome.signalNumber == 11)
        #expect(runs[1].resolvedOutcome.exitCode == 3)
        #expect(runs.map(\.failed) == [true, true, false])

        // The script runs out: the tracer's error is the session's.
        let short = ScriptedTracer([SessionScript.launch()])
        let session = try RunSession(configuration: SessionScript.configuration(runs: 2), tracer: short)
        #expect(throws: RunError.self) { try SessionScript.runs(session) }
    }

    @Test("prewarm: the frozen launch is paired with the ordinary one, its figures from the freeze")
    func prewarmPairing() throws {
        var configuration = PrewarmConfiguration(run: SessionScript.configuration(runs: 1))
        configuration.hold = .fixed(ns: 1_000_000)
        configuration.scanHazards = false
        // The first frame long after any real hold: the resume's real time comes before it.
        func launch(pid: Int32) -> ScriptedTracer.Launch {
            var launch = SessionScript.launch(pid: pid)
            launch.hookLines = [("first-frame", 5_000_000_000, "")]
            launch.events[launch.events.count - 1] = .exited(.exited(code: 0), atNs: 6_000_000_000)
            return launch
        }
        let tracer = ScriptedTracer([launch(pid: 4_190_061), launch(pid: 4_190_062)], base: .now)
        let session = try PrewarmSession(configuration: configuration, tracer: tracer)
        let run = try #require(try LaunchPipeline(session, sinks: []).run()[0].get().lastRun)
        #expect(tracer.remaining == 0)
        // Index 0: the ordinary launch goes first, without the prewarm environment.
        #expect(tracer.requests.map { $0.environment.contains("ActivePrewarm=1") } == [false, true])
        #expect(tracer.requests.map { $0.freeze != nil } == [false, true])
        let prewarm = try #require(run.prewarm)
        #expect(run.pid == 4_190_062)
        #expect(prewarm.ordinaryPid == 4_190_061)
        #expect(prewarm.ordinaryTimeToMainNs == 1_500_000)
        #expect(prewarm.ordinaryTimeToFirstFrameNs == 5_000_000_000)
        #expect(prewarm.prewarmNs == 1_500_000, "frozen at the scripted main")
        #expect(prewarm.holdNs >= 1_000_000)
        #expect(prewarm.resumeAtNs == prewarm.prewarmNs + prewarm.holdNs)
        let optimized = try #require(run.metrics.optimizedTimeToFirstFrameNs)
        #expect(optimized == 5_000_000_000 - prewarm.resumeAtNs)
        #expect(prewarm.savingNs == Int64(5_000_000_000) - Int64(optimized))
        #expect(run.metrics.timeToFirstFrameNs == nil, "a prewarmed launch has only the optimized metric")
        #expect(run.states?.map(\.state) == [.notRunning, .prewarmed, .inactive, .active, .terminated])
    }
}
