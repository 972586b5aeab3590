import Foundation
import Testing

@testable import LaunchprofReport
@testable import LaunchprofRenderers

@Suite("export: OpenMetrics accepted by Prometheus's parser")
struct OpenMetricsRendererTests {
    @Test func parserReadsEveryFamilyWithItsLabelsAndValues() throws {
        var generator = SeededGenerator(seed: 11)
        var target = BenchSamples.target
        // Label values that need escaping.
        target.path = "/opt/a \"quoted\" \\ app"
        let report = BenchSamples.report(runs: 9, workNs: 8_000_000, noise: 0.1, generator: &generator, target: target)
        let text = try OpenMetricsRenderer().render(report)
        #expect(text.hasSuffix("# EOF\n"))
        let samples = try OpenMetricsParser.parse(text)
        let families = Set(samples.compactMap { $0["family"] as? String })
        #expect(families == [
            "launchprof_time_to_main_seconds", "launchprof_time_to_first_frame_seconds",
            "launchprof_extended_launch_seconds", "launchprof_exit_seconds", "launchprof_phase_duration_seconds",
            "launchprof_runs",
        ])
        let timed = samples.filter { $0["family"] as? String != "launchprof_runs" }
        #expect(timed.allSatisfy { $0["type"] as? String == "summary" && $0["unit"] as? String == "seconds" })
        for sample in samples {
            let labels = try #require(sample["labels"] as? [String: String])
            #expect(labels["program"] == target.path)
            #expect(labels["build_id"] == "00ff00ff")
            #expect(labels["host"] == "ci-1")
            #expect(labels["mode"] == "warm")
        }
        // The median of the first frame, read back, is the report's, in seconds.
        let median = try #require(samples.first {
            $0["name"] as? String == "launchprof_time_to_first_frame_seconds"
                && ($0["labels"] as? [String: String])?["quantile"] == "0.5"
        })
        let expected = try #require(report.summary.timeToFirstFrameNs?.median)
        #expect(median["value"] as? Double == Double(expected) / 1e9)
        let count = samples.first {
            $0["name"] as? String == "launchprof_phase_duration_seconds_count"
                && ($0["labels"] as? [String: String])?["phase"] == "didFinishLaunching"
        }
        #expect(count?["value"] as? Double == 9)
    }

    /// Runs are counted by outcome; a timed-out run's missing first frame is not exported as one;
    /// a prewarm report is labelled prewarm and exports its optimized time and saving.
    @Test func runsByOutcomeAndPrewarm() throws {
        var generator = SeededGenerator(seed: 13)
        var report = BenchSamples.report(runs: 3, workNs: 2_000_000, noise: 0.1, generator: &generator)
        report.runs[0].outcome = .timedOut(after: 1_000_000_000, waitingFor: "the first-frame hook")
        report.runs[0].metrics.timeToFirstFrameNs = nil
        report.runs[1].outcome = RunOutcome(kind: .crashed, signal: "SIGSEGV", signalNumber: 11)
        report.runs[1].metrics.timeToFirstFrameNs = nil
        report.runs[2].outcome = .completed
        for index in report.runs.indices {
            report.runs[index].metrics.optimizedTimeToFirstFrameNs = 1_000_000 + UInt64(index)
            var prewarm = PrewarmRun(freezeAt: "main", prewarmNs: 5_000_000, holdNs: 9_000_000, resumeAtNs: 14_000_000)
            prewarm.savingNs = 4_000_000
            report.runs[index].prewarm = prewarm
        }
        report = LaunchReport(target: report.target, host: report.host, mode: report.mode, runs: report.runs)
        let samples = try OpenMetricsParser.parse(try OpenMetricsRenderer().render(report))
        func value(_ name: String, _ label: String, _ wanted: String) -> Double? {
            samples.first { $0["name"] as? String == name && ($0["labels"] as? [String: String])?[label] == wanted }?["value"] as? Double
        }
        #expect(value("launchprof_runs_total", "outcome", "timeout") == 1)
        #expect(value("launchprof_runs_total", "outcome", "crashed") == 1)
        #expect(value("launchprof_runs_total", "outcome", "completed") == 1)
        #expect(value("launchprof_runs_total", "outcome", "exited_early") == 0)
        #expect(value("launchprof_time_to_first_frame_seconds_count", "mode", "prewarm") == 1, "only the completed run's first frame")
        #expect(value("launchprof_optimized_time_to_first_frame_seconds_count", "mode", "prewarm") == 3)
        #expect(value("launchprof_prewarm_saving_seconds", "quantile", "0.5") == 0.004)
        #expect(samples.allSatisfy { ($0["labels"] as? [String: String])?["mode"] == "prewarm" })
    }

    @Test func parserRefusesABrokenText() throws {
        // The check can fail: the same text without its EOF marker is refused.
        var generator = SeededGenerator(seed: 12)
        let report = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator)
        let text = try OpenMetricsRenderer().render(report)
        #expect(throws: OpenMetricsParser.Failure.self) {
            try OpenMetricsParser.parse(String(text.dropLast("# EOF\n".count)))
        }
        #expect(OpenMetricsRenderer.seconds(1_234_567_890) == "1.234567890")
        #expect(OpenMetricsRenderer.seconds(5) == "0.000000005")
    }
}
