import Foundation
import Testing

/// `prewarm --sample` of the demo: the hold is launchprof's freeze, not the program's work. No
/// hang or wait flag, MetricKit hang diagnostic or hang histogram comes from it, the trace has
/// no slice for it on the flags track, and the demo's own heavy work is still flagged.
/// (On a loaded machine the demo's own 50 ms of work can become a real hang, ~0.5 s runnable:
/// every hang in any output must then be one of the runs' hang flags, each outside the hold.)
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
        var programHangs = 0
        for run in runs {
            let prewarm = try #require(run["prewarm"] as? [String: Any])
            let hold = try #require(prewarm["holdNs"] as? Int)
            let resume = try #require(prewarm["resumeAtNs"] as? Int)
            let flags = run["flags"] as? [[String: Any]] ?? []
            programHangs += flags.count { $0["kind"] as? String == "hang" }
            // No flag of any kind in the hold, hangs included: nothing the program did falls in it.
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
        let summaryHangs = ((summary["flags"] as? [[String: Any]]) ?? []).count { $0["kind"] as? String == "hang" }
        #expect(summaryHangs <= programHangs, "the summary's hangs are the runs' (\(programHangs))")

        // MetricKit: a hang diagnostic per hang of the program's, a hang histogram only with one.
        let diagnostics = try String(contentsOfFile: metricKit + "/diagnostics.json", encoding: .utf8)
        let metrics = try String(contentsOfFile: metricKit + "/metrics.json", encoding: .utf8)
        #expect(diagnostics.components(separatedBy: "\"hangDuration\"").count - 1 == programHangs,
                "\(programHangs) hangs of the program's: \(diagnostics.prefix(400))")
        #expect(metrics.contains("histogrammedAppHangTime") == (programHangs > 0), "\(metrics.prefix(400))")

        // The trace: no hang slice, the hold is its own slice, every track nests in both viewers.
        let traceBytes = Array(try Data(contentsOf: URL(fileURLWithPath: trace)))
        try TraceViewerNesting.expectNested(traceBytes, "prewarm trace")
        let text = String(decoding: traceBytes, as: UTF8.self)
        #expect(text.components(separatedBy: #""name":"hang: "#).count - 1 <= programHangs, "the trace's hangs are the runs'")
        #expect(text.contains(#""name":"prewarm.hold (frozen)""#))

        // The export: both consumers read a prewarm report, its saving signed.
        let classic = try LaunchprofCLI.run(["export", "--prometheus", json])
        let checked = try Promtool.checkMetrics(classic.stdout)
        #expect(classic.status == 0 && checked.status == 0, "\(classic.stderr) \(checked.output)")
    }
}
