import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// `launchprof prewarm` against prewarm-app's own clock: what it does before `main` (a 30 ms
/// constructor) and after (20 ms to its first frame), held frozen in between.
@Suite("prewarm: accuracy against the program's clock", .serialized)
struct PrewarmAccuracyTests {
    static let holdNs: UInt64 = 300_000_000

    @Test func optimizedTimeToFirstFrameIsThePostResumeWork() throws {
        let truthPath = PrewarmHarness.truthFile()
        defer { unlink(truthPath) }
        let outcome = try PrewarmHarness.run(
            try PrewarmHarness.app(), runs: 3, environment: ["LP_FIXTURE_TRUTH": truthPath]
        ) { $0.hold = .fixed(ns: Self.holdNs); $0.scanHazards = false; $0.run.readiness = .exit }
        let truth = try PrewarmHarness.truth(truthPath)
        let ctors = truth["ctor prewarm"] ?? [], mains = truth["main prewarm"] ?? []
        let frames = truth["first-frame prewarm"] ?? []
        let ordinaryCtors = truth["ctor ordinary"] ?? [], ordinaryFrames = truth["first-frame ordinary"] ?? []
        try #require(outcome.runs.count == 3 && frames.count == 3 && ctors.count == 3 && ordinaryCtors.count == 3)
        try #require(ordinaryFrames.count == 3)
        var errors: [Int64] = []
        for (index, run) in outcome.runs.enumerated() {
            let prewarm = try #require(run.prewarm)
            let optimized = try #require(run.metrics.optimizedTimeToFirstFrameNs)
            let postResume = frames[index].end - frames[index].begin
            // The process did not run while frozen: its own clock shows the hold between the end
            // of its constructor and main.
            #expect(mains[index].begin - ctors[index].end >= Self.holdNs, "run \(index): ran while frozen")
            #expect(prewarm.holdNs >= Self.holdNs && prewarm.holdNs < Self.holdNs + 200_000_000)
            #expect(prewarm.frozenCPUNs == 0, "run \(index): used \(prewarm.frozenCPUNs) ns of CPU while frozen")
            #expect(prewarm.prewarmNs >= ctors[index].end - ctors[index].begin)
            #expect(run.metrics.timeToFirstFrameNs == nil, "the hold must not be inside a user-driven metric")
            // The optimized metric is the post-resume work plus the resume latency: never less.
            #expect(optimized >= postResume, "run \(index): \(optimized) < truth \(postResume)")
            errors.append(Int64(optimized) - Int64(postResume))
            // The ordinary launch includes its own pre-main work and its own work after main (its
            // own clock: the busy loops of two launches stretch differently on a loaded machine).
            let ordinary = try #require(prewarm.ordinaryTimeToFirstFrameNs)
            let ctor = ordinaryCtors[index].end - ordinaryCtors[index].begin
            let ordinaryPost = ordinaryFrames[index].end - ordinaryFrames[index].begin
            #expect(ordinary >= ctor + ordinaryPost, "run \(index): ordinary \(ordinary) < its work \(ctor + ordinaryPost)")
            #expect(prewarm.savingNs == Int64(ordinary) - Int64(optimized))
            #expect(try #require(prewarm.frozenPSSBytes) > 64 * 1024)
            #expect(run.states?.map(\.state) == [.notRunning, .prewarmed, .inactive, .active, .terminated])
        }
        // Median of (optimized − truth): the resume latency, within max(1 ms, 5%).
        let median = errors.sorted()[errors.count / 2]
        let postMedian = frames.map { $0.end - $0.begin }.sorted()[1]
        #expect(median <= Int64(max(1_000_000, postMedian / 20)), "median resume latency \(median) ns")
        let summary = try #require(outcome.summary.prewarm)
        let saving = try #require(summary.savingNs)
        #expect(saving.median >= 25_000_000, "saving p50 \(saving.median) ns: the 30 ms pre-main work was not saved")
        #expect(saving.p90 >= saving.median)
        #expect(summary.frozenPSSBytes?.count == 3)
        #expect(outcome.summary.optimizedTimeToFirstFrameNs?.count == 3)
    }

    @Test func freezesBeforeWillFinishLaunching() throws {
        let truthPath = PrewarmHarness.truthFile()
        defer { unlink(truthPath) }
        let outcome = try PrewarmHarness.run(
            try PrewarmHarness.app(), environment: ["LP_FIXTURE_TRUTH": truthPath, "PW_HOOKED": "1"]
        ) {
            $0.hold = .fixed(ns: 200_000_000)
            $0.freezeAt = .willFinishLaunching
            $0.scanHazards = false
            $0.run.readiness = .exit
        }
        let truth = try PrewarmHarness.truth(truthPath)
        let ctor = try #require(truth["ctor prewarm"]?.first), main = try #require(truth["main prewarm"]?.first)
        let frame = try #require(truth["first-frame prewarm"]?.first)
        // main ran at once (not frozen there); the hold came after main, before the first frame.
        #expect(main.begin - ctor.end < 200_000_000)
        #expect(frame.end - main.begin >= 200_000_000)
        let run = try #require(outcome.runs.first)
        #expect(run.prewarm?.freezeAt == "willFinishLaunching")
        let optimized = try #require(run.metrics.optimizedTimeToFirstFrameNs)
        #expect(optimized < 200_000_000 && optimized >= 20_000_000, "\(optimized)")
    }

    @Test func aProgramThatNeverStopsCannotBeFrozenBeforeWillFinishLaunching() throws {
        #expect(throws: RunError.self) {
            _ = try PrewarmHarness.run(try PrewarmHarness.app()) {
                $0.freezeAt = .willFinishLaunching
                $0.scanHazards = false
                $0.hold = .fixed(ns: 1_000_000)
            }
        }
    }

    @Test func poolHitsAndExpires() throws {
        let outcome = try PrewarmHarness.run(
            try PrewarmHarness.app(), runs: 3, environment: ["PW_INIT_US": "5000", "PW_POST_US": "2000"]
        ) {
            // Launches 400 ms apart: a refill (12-60 ms on a machine at load 17) is long done.
            $0.pool = 2
            $0.hold = .fixed(ns: 400_000_000)
            $0.ttlNs = 10_000_000_000
            $0.scanHazards = false
        }
        let pool = try #require(outcome.summary.prewarm?.pool)
        #expect(pool.launches == 3)
        #expect(pool.hits == 3, "every launch 400 ms apart finds one of 2 frozen processes: \(pool)")
        #expect(pool.hitRatePerMille == 1000)
        #expect(try #require(pool.heldPSSBytes).median > 128 * 1024)
        #expect(pool.refillNs?.count ?? 0 >= 3)
        #expect(outcome.runs.allSatisfy { $0.prewarm?.poolHit == true })

        // A TTL shorter than the time between launches: every frozen process expires unused.
        let expiring = try PrewarmHarness.run(
            try PrewarmHarness.app(), runs: 1, environment: ["PW_INIT_US": "1000", "PW_POST_US": "1000"]
        ) {
            // The launch 1.5 s after the spawn: under load the process may take ~0.4 s to freeze.
            $0.pool = 1
            $0.hold = .fixed(ns: 1_500_000_000)
            $0.ttlNs = 100_000_000
            $0.scanHazards = false
        }
        let expired = try #require(expiring.summary.prewarm?.pool)
        #expect(expired.expired >= 1, "\(expired)")
    }

    @Test func holdsParse() throws {
        #expect(try PrewarmHold(argument: "500ms") == .fixed(ns: 500_000_000))
        #expect(try PrewarmHold(argument: "1m") == .fixed(ns: 60_000_000_000))
        #expect(try PrewarmHold(argument: "uniform:1s-3s") == .uniform(minimumNs: 1_000_000_000, maximumNs: 3_000_000_000))
        #expect(try PrewarmHold(argument: "exponential:2s") == .exponential(meanNs: 2_000_000_000))
        #expect(throws: PrewarmArgumentError.self) { try PrewarmHold(argument: "soon") }
        #expect(throws: PrewarmArgumentError.self) { try PrewarmHold(argument: "uniform:3s-1s") }
    }
}
