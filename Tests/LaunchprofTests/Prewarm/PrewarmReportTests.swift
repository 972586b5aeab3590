import Foundation
@testable import LaunchprofReport
@testable import LaunchprofRenderers
import Testing

/// The prewarm report model with plain values: the hand-written encoder, the summary, the text.
@Suite("prewarm: report model")
struct PrewarmReportTests {
    static func run(saving: Int64, pss: UInt64, cpu: UInt64 = 0) -> LaunchRun {
        var run = LaunchRun(
            index: 0, pid: 42, exitStatus: RunExit(code: 0),
            phases: [LaunchPhase(name: "main", startNs: 10, durationNs: 0)],
            metrics: LaunchMetrics(timeToMainNs: 10, optimizedTimeToFirstFrameNs: 20))
        var prewarm = PrewarmRun(
            freezeAt: "main", prewarmNs: 10, holdNs: 1_000, resumeAtNs: 1_010, frozenCPUNs: cpu, frozenPSSBytes: pss)
        prewarm.ordinaryTimeToFirstFrameNs = UInt64(20 + max(0, saving))
        prewarm.savingNs = saving
        prewarm.ordinaryPid = 43
        prewarm.poolHit = true
        run.prewarm = prewarm
        run.states = [LifecycleState(.notRunning, atNs: 0), LifecycleState(.prewarmed, atNs: 10), LifecycleState(.terminated, atNs: 2_000)]
        return run
    }

    @Test func prewarmAndStatesReadBackAsWritten() throws {
        let run = Self.run(saving: -5, pss: 4096)
        #expect(try LaunchRunJSONTests.roundTrip(run) == run)
        let text = String(decoding: try LaunchReportWriter.encodeValue(run), as: UTF8.self)
        #expect(text.contains(#""prewarm":{"freezeAt":"main","frozenCPUNs":0,"frozenPSSBytes":4096,"holdNs":1000"#))
        #expect(text.contains(#""states":[{"atNs":0,"state":"notRunning"}"#))
    }

    @Test func summaryGivesSavingPercentilesLossesAndFrozenMemory() {
        var builder = LaunchSummaryBuilder()
        for (saving, pss) in [(Int64(10), UInt64(100)), (20, 200), (30, 300), (-4, 400)] {
            builder.add(Self.run(saving: saving, pss: pss, cpu: saving < 0 ? 7 : 0))
        }
        let prewarm = builder.summary.prewarm
        #expect(prewarm?.savingNs?.median == 10)
        #expect(prewarm?.savingNs?.p90 == 30)
        #expect(prewarm?.losses == 1)
        #expect(prewarm?.frozenPSSBytes?.max == 400)
        #expect(prewarm?.frozenCPURuns == 1)
        #expect(LaunchSummaryBuilder().summary.prewarm == nil)
    }

    @Test func textShowsBothLaunchesTheSavingAndHazards() {
        var builder = LaunchSummaryBuilder()
        builder.add(Self.run(saving: 30_000_000, pss: 2 << 20))
        var summary = builder.summary
        summary.prewarm?.hazards = [PrewarmHazard(kind: .network, syscall: "connect", detail: "127.0.0.1:9", object: "app", function: "f")]
        let report = LaunchReport(
            target: .init(path: "/bin/app", arguments: []), host: .init(kernel: "", cpu: "", cores: 1, libc: ""),
            mode: .init(runs: 1), runs: [], summary: summary)
        let text = PrewarmTextRenderer().render(report, hold: "2s", freezeAt: "main")
        #expect(text.contains("frozen at main, held 2s"))
        #expect(text.contains("saving               p50 30.0 ms"), "\(text)")
        #expect(text.contains("network: connect 127.0.0.1:9 from f (app)"))
        #expect(text.contains("PSS median 2.00 MiB"), "\(text)")
    }

    /// A loss is a loss: when most pairs lost, the median saving is negative and the text says
    /// prewarming lost, with how many pairs were slower.
    @Test func textSaysNoSavingWhenMostPairsLost() {
        var builder = LaunchSummaryBuilder()
        for saving in [Int64(-3_000_000), -1_000_000, 4_000_000] { builder.add(Self.run(saving: saving, pss: 1 << 20)) }
        let report = LaunchReport(
            target: .init(path: "/bin/app", arguments: []), host: .init(kernel: "", cpu: "", cores: 1, libc: ""),
            mode: .init(runs: 3), runs: [], summary: builder.summary)
        let text = PrewarmTextRenderer().render(report, hold: "2s", freezeAt: "main")
        #expect(text.contains("saving               none: a loss of 1.00 ms at the median (p50 -1.00 ms, p90 4.00 ms); 2 of 3 pair(s) slower prewarmed"), "\(text)")
        #expect(builder.summary.prewarm?.savingNs?.min == -3_000_000, "the statistics keep the loss")
        #expect(builder.summary.prewarm?.savingNs?.mean == 0)
    }
}
