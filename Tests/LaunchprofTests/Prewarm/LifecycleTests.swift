import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// `launchprof run --resume-cycles K`: background and back K times through the lifecycle
/// signals, each resume timed to the app's didBecomeActive; the C header and the Swift entry point.
@Suite("lifecycle: resume cycles", .serialized)
struct LifecycleTests {
    /// With a writable cgroup v2 hierarchy the app is also suspended (frozen) in the background.
    static var freezerAvailable: Bool {
        ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].contains {
            access($0 + "/cgroup.procs", W_OK) == 0 && access($0 + "/cgroup.controllers", R_OK) == 0
        }
    }

    static var expectedStates: [LifecycleState.State] {
        let cycle: [LifecycleState.State] = freezerAvailable ? [.background, .suspended, .inactive, .active] : [.background, .inactive, .active]
        return [.notRunning, .inactive, .active] + cycle + cycle + [.terminated]
    }

    @Test func cHeaderAppResumesAndIsTimed() throws {
        let truthPath = PrewarmHarness.truthFile()
        defer { unlink(truthPath) }
        let outcome = try RunHarness.run(
            try PrewarmHarness.app(), runs: 2,
            environment: ["PW_LIFECYCLE": "1", "PW_INIT_US": "1000", "PW_POST_US": "1000", "LP_FIXTURE_TRUTH": truthPath]
        ) { $0.resumeCycles = 2 }
        let truth = try PrewarmHarness.truth(truthPath)
        // Each event reached the app's callback, in order, twice per run; willTerminate at the end.
        #expect(truth["lifecycle didBecomeActive"]?.count == 4)
        #expect(truth["lifecycle didEnterBackground"]?.count == 4)
        #expect(truth["lifecycle willTerminate"]?.count == 2)
        for run in outcome.runs {
            #expect(run.states?.map(\.state) == Self.expectedStates, "\(run.states ?? [])")
            let resume = try #require(run.metrics.resumeTimeNs)
            #expect(resume < 100_000_000, "resume \(resume) ns")
            #expect(run.phases.filter { $0.name == "didBecomeActive" }.count == 2)
            // States are in time order.
            let times = run.states?.map(\.atNs) ?? []
            #expect(times == times.sorted())
        }
        #expect(outcome.summary.resumeTimeNs?.count == 2)
    }

    @Test func swiftEntryPointFreezesBeforeWillFinishLaunching() throws {
        let demo = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo-swift").path
        let outcome = try PrewarmHarness.run(demo, runs: 1, environment: ["LAUNCHPROF_DEMO_INIT_US": "20000"]) {
            $0.freezeAt = .willFinishLaunching
            $0.hold = .fixed(ns: 100_000_000)
            $0.scanHazards = false
        }
        let run = try #require(outcome.runs.first)
        let prewarm = try #require(run.prewarm)
        #expect(prewarm.freezeAt == "willFinishLaunching")
        // Frozen after main (the 20 ms constructor is in the prewarm part), before the first step.
        #expect(prewarm.prewarmNs >= 20_000_000)
        #expect(prewarm.prewarmNs > (run.metrics.timeToMainNs ?? .max))
        let willFinish = try #require(run.phase("willFinishLaunching"))
        #expect(willFinish.startNs >= prewarm.resumeAtNs, "willFinishLaunching began before the resume")
        let optimized = try #require(run.metrics.optimizedTimeToFirstFrameNs)
        #expect(optimized >= 12_000_000, "the demo's steps take 12 ms: \(optimized)")
        #expect(try #require(prewarm.savingNs) > 15_000_000)
    }

    @Test func swiftDemoHearsEveryTransition() throws {
        let demo = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo-swift").path
        let outcome = try RunHarness.run(demo, runs: 1, environment: ["LAUNCHPROF_DEMO_INIT_US": "1000"]) {
            $0.resumeCycles = 2
        }
        let run = try #require(outcome.runs.first)
        #expect(run.states?.map(\.state) == Self.expectedStates, "\(run.states ?? [])")
        #expect(run.metrics.resumeTimeNs != nil)
        for name in ["willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"] {
            #expect(run.phases.filter { $0.name == name }.count == 2, "\(name)")
        }
    }
}
