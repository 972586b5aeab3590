import Foundation
import Testing

/// `prewarm --sample` of the demo: the hold is launchprof's freeze, not the program's work. No
/// hang or wait flag, MetricKit hang diagnostic or hang histogram comes from it, the trace has
/// no slice for it on the flags track, and the demo's own heavy work is still flagged.
@Suite("prewarm --sample: the hold is not a hang")
struct PrewarmSamplingTests {
    @Test func theHoldIsNoHangInAnyOutput() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lp-prewarm-sample-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let demo = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo").path
        let json = work.appendingPathComponent("prewarm.json").path
        let trace = work.appendingPathComponent("trace.json").path
        let metricKit = work.appendingPathComponent("metrickit").path
        // 600 ms: over MetricKit's 250 ms hang threshold, which the hold alone crossed before.
        let outcome = try LaunchprofCLI.run([
            "prewarm", "--runs", "2", "--hold", "600ms", "--sample", "--json", json, "--trace", trace, "--metrickit", metricKit, demo,
        ])
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(1_500))")
        #expect(outcome.stdout.contains("left out"), "the text says the hold was left out: \(outcome.stdout)")

        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.count == 2)
        for run in runs {
            let prewarm = try #require(run["prewarm"] as? [String: Any])
            let hold = try #require(prewarm["holdNs"] as? Int)
            let resume = try #require(prewarm["resumeAtNs"] as? Int)
            let flags = run["flags"] as? [[String: Any]] ?? []
            #expect(!flags.contains { $0["kind"] as? String == "hang" }, "no hang: \(flags)")
            // No flag of any kind in the hold: nothing the program did falls in it.
            for flag in flags {
                let start = flag["startNs"] as? Int ?? 0
                let end = start + (flag["durationNs"] as? Int ?? 0)
                #expect(end <= resume - hold || start >= resume, "a flag inside the hold: \(flag)")
            }
            // The demo's own heavy work (build_search_index, 50 ms of CPU) is still found.
            #expect(flags.contains { $0["kind"] as? String == "cpu" && $0["function"] as? String == "build_search_index" }, "\(flags)")
            let sampling = try #require(run["sampling"] as? [String: Any])
            let frozen = try #require(sampling["frozenNs"] as? Int)
            #expect(abs(frozen - hold) < 1_000_000, "the hold left out (\(frozen) ns) is the hold (\(hold) ns)")
            #expect((sampling["blockedNs"] as? Int ?? .max) < hold, "the hold is no wait")
        }
        let summary = try #require(report["summary"] as? [String: Any])
        #expect(!((summary["flags"] as? [[String: Any]]) ?? []).contains { $0["kind"] as? String == "hang" })

        // MetricKit: no hang diagnostic, no hang histogram.
        let diagnostics = try String(contentsOfFile: metricKit + "/diagnostics.json", encoding: .utf8)
        let metrics = try String(contentsOfFile: metricKit + "/metrics.json", encoding: .utf8)
        #expect(!diagnostics.contains("hangDiagnostics") && !diagnostics.contains("hangDuration"), "\(diagnostics.prefix(400))")
        #expect(!metrics.contains("histogrammedAppHangTime"), "\(metrics.prefix(400))")

        // The trace: no hang slice, the hold is its own slice, every track nests in both viewers.
        let traceBytes = Array(try Data(contentsOf: URL(fileURLWithPath: trace)))
        try TraceViewerNesting.expectNested(traceBytes, "prewarm trace")
        let text = String(decoding: traceBytes, as: UTF8.self)
        #expect(!text.contains(#""name":"hang: "#))
        #expect(text.contains(#""name":"prewarm.hold (frozen)""#))

        // The export: both consumers read a prewarm report, its saving signed.
        let classic = try LaunchprofCLI.run(["export", "--prometheus", json])
        let checked = try Promtool.checkMetrics(classic.stdout)
        #expect(classic.status == 0 && checked.status == 0, "\(classic.stderr) \(checked.output)")
    }
}
