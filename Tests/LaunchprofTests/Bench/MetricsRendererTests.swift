import Foundation
import Testing

@testable import LaunchprofReport
@testable import LaunchprofRenderers

@Suite("export: OpenMetrics and the classic text format, read by Prometheus's parsers and promtool")
struct MetricsRendererTests {
    @Test func parserReadsEveryFamilyWithItsLabelsAndValues() throws {
        var generator = SeededGenerator(seed: 11)
        var target = BenchSamples.target
        // Label values that need escaping.
        target.path = "/opt/a \"quoted\" \\ app"
        let report = BenchSamples.report(runs: 9, workNs: 8_000_000, noise: 0.1, generator: &generator, target: target)
        let text = try MetricsRenderer(format: .openMetrics).render(report)
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
        let samples = try OpenMetricsParser.parse(try MetricsRenderer(format: .openMetrics).render(report))
        func value(_ name: String, _ label: String, _ wanted: String) -> Double? {
            samples.first { $0["name"] as? String == name && ($0["labels"] as? [String: String])?[label] == wanted }?["value"] as? Double
        }
        #expect(value("launchprof_runs_total", "outcome", "timeout") == 1)
        #expect(value("launchprof_runs_total", "outcome", "crashed") == 1)
        #expect(value("launchprof_runs_total", "outcome", "completed") == 1)
        #expect(value("launchprof_runs_total", "outcome", "exited_early") == 0)
        #expect(value("launchprof_time_to_first_frame_seconds_count", "mode", "prewarm") == 1, "only the completed run's first frame")
        #expect(value("launchprof_optimized_time_to_first_frame_seconds_count", "mode", "prewarm") == 3)
        #expect(value("launchprof_prewarm_saving_seconds", "statistic", "median") == 0.004)
        #expect(samples.allSatisfy { ($0["labels"] as? [String: String])?["mode"] == "prewarm" })
    }

    @Test func parserRefusesABrokenText() throws {
        // The check can fail: the same text without its EOF marker is refused.
        var generator = SeededGenerator(seed: 12)
        let report = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator)
        let text = try MetricsRenderer(format: .openMetrics).render(report)
        #expect(throws: OpenMetricsParser.Failure.self) {
            try OpenMetricsParser.parse(String(text.dropLast("# EOF\n".count)))
        }
        #expect(MetricsExposition.seconds(1_234_567_890) == "1.234567890")
        #expect(MetricsExposition.seconds(5) == "0.000000005")
    }

    /// The same families in both formats: OpenMetrics (family without `_total`, units, `# EOF`)
    /// read by the OpenMetrics parser; 0.0.4 (`# TYPE launchprof_runs_total counter`, no unit,
    /// no EOF) passing `promtool check metrics` with no lint problem. The sample lines are the
    /// same text in both.
    @Test func bothFormatsReadByTheirConsumers() throws {
        var generator = SeededGenerator(seed: 21)
        var report = BenchSamples.report(runs: 5, workNs: 4_000_000, noise: 0.1, generator: &generator)
        report.runs[1].outcome = RunOutcome(kind: .crashed, signal: "SIGSEGV", signalNumber: 11)
        report = LaunchReport(target: report.target, host: report.host, mode: report.mode, runs: report.runs)
        let openMetrics = try MetricsRenderer(format: .openMetrics).render(report)
        let classic = try MetricsRenderer(format: .prometheusText).render(report)
        #expect(openMetrics.contains("# TYPE launchprof_runs counter\n") && openMetrics.hasSuffix("# EOF\n"))
        #expect(openMetrics.contains("# UNIT launchprof_time_to_main_seconds seconds\n"))
        #expect(classic.contains("# HELP launchprof_runs_total ") && classic.contains("# TYPE launchprof_runs_total counter\n"))
        #expect(!classic.contains("# EOF") && !classic.contains("# UNIT"))
        let samples = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("#") } }
        #expect(samples(openMetrics) == samples(classic))
        _ = try OpenMetricsParser.parse(openMetrics)
        let checked = try Promtool.checkMetrics(classic)
        #expect(checked.status == 0, "promtool: \(checked.output)")
        // promtool can fail: the OpenMetrics text read as 0.0.4 loses the counter's type.
        let misread = try Promtool.checkMetrics(openMetrics)
        #expect(misread.status != 0 && misread.output.contains("launchprof_runs_total no help text"), "\(misread.output)")
    }

    /// `main`, `firstFrame`, `exit` and each later image's `exec` are instants: never a phase
    /// duration with every quantile 0. main, firstFrame and exit have their own families;
    /// windowMapped and a later exec are times from the spawn in `launchprof_instant_seconds`.
    @Test func instantsAreTimesFromTheSpawnNotZeroDurations() throws {
        var runs = (0..<3).map { BenchSamples.run($0, frameNs: 9_000_000 + UInt64($0) * 100_000, workNs: 5_000_000) }
        for index in runs.indices {
            runs[index].phases += [
                LaunchPhase(name: "exec", startNs: 0, durationNs: 300_000),
                LaunchPhase(name: "windowMapped", startNs: 8_000_000 + UInt64(index) * 1_000, durationNs: 0),
                LaunchPhase(name: "exec", startNs: 2_000_000, durationNs: 0, image: 1),
                LaunchPhase(name: "exit", startNs: 9_500_000, durationNs: 0),
            ]
        }
        let report = LaunchReport(target: BenchSamples.target, host: BenchSamples.host, mode: .init(runs: 3), runs: runs)
        let text = try MetricsRenderer(format: .openMetrics).render(report)
        let samples = try OpenMetricsParser.parse(text)
        func labels(_ sample: [String: Any]) -> [String: String] { sample["labels"] as? [String: String] ?? [:] }
        let durations = samples.filter { $0["family"] as? String == "launchprof_phase_duration_seconds" }
        #expect(Set(durations.compactMap { labels($0)["phase"] }) == ["exec", "didFinishLaunching"], "spans only")
        #expect(durations.allSatisfy { labels($0)["image"] == nil }, "image 1's exec is an instant")
        let instants = samples.filter { $0["family"] as? String == "launchprof_instant_seconds" }
        #expect(Set(instants.compactMap { labels($0)["instant"] }) == ["windowMapped", "exec"])
        let mapped = try #require(instants.first { labels($0)["instant"] == "windowMapped" && labels($0)["quantile"] == "0.5" })
        #expect(mapped["value"] as? Double == 0.008001)
        let exec = try #require(instants.first { labels($0)["instant"] == "exec" && labels($0)["quantile"] == "1" })
        #expect(labels(exec)["image"] == "1" && exec["value"] as? Double == 0.002)
        #expect(!samples.contains { ($0["family"] as? String)?.hasPrefix("launchprof_phase") == true && $0["value"] as? Double == 0 })
        #expect(try Promtool.checkMetrics(try MetricsRenderer(format: .prometheusText).render(report)).status == 0)
    }

    /// A loss is a loss in the export too: the saving's statistics are gauges that may be
    /// negative (a summary's quantiles and sum may not), with the pairs that lost counted.
    @Test func aLossIsANegativeSaving() throws {
        var generator = SeededGenerator(seed: 23)
        var report = BenchSamples.report(runs: 3, workNs: 2_000_000, noise: 0.1, generator: &generator)
        for (index, saving) in [Int64(-4_900_000), -1_000_000, 2_000_000].enumerated() {
            report.runs[index].metrics.optimizedTimeToFirstFrameNs = 3_000_000
            var prewarm = PrewarmRun(freezeAt: "main", prewarmNs: 1_000_000, holdNs: 500_000_000, resumeAtNs: 501_000_000)
            prewarm.savingNs = saving
            report.runs[index].prewarm = prewarm
        }
        report = LaunchReport(target: report.target, host: report.host, mode: report.mode, runs: report.runs)
        let samples = try OpenMetricsParser.parse(try MetricsRenderer(format: .openMetrics).render(report))
        func value(_ family: String, _ label: String, _ wanted: String) -> Double? {
            samples.first { $0["family"] as? String == family && ($0["labels"] as? [String: String])?[label] == wanted }?["value"] as? Double
        }
        #expect(samples.first { $0["family"] as? String == "launchprof_prewarm_saving_seconds" }?["type"] as? String == "gauge")
        #expect(value("launchprof_prewarm_saving_seconds", "statistic", "min") == -0.0049)
        #expect(value("launchprof_prewarm_saving_seconds", "statistic", "median") == -0.001)
        #expect(value("launchprof_prewarm_saving_seconds", "statistic", "max") == 0.002)
        #expect(value("launchprof_prewarm_pairs", "result", "loss") == 2 && value("launchprof_prewarm_pairs", "result", "no_loss") == 1)
        let checked = try Promtool.checkMetrics(try MetricsRenderer(format: .prometheusText).render(report))
        #expect(checked.status == 0, "\(checked.output)")
    }

    /// Help text and label values with a quote, a backslash and a line break: escaped as each
    /// format wants (OpenMetrics escapes `"` in help, 0.0.4 must not), read back by each consumer.
    @Test func escapingPerFormat() throws {
        let exposition = MetricsExposition(families: [
            MetricFamily(
                name: "launchprof_test_seconds", type: .gauge, unit: "seconds", help: "A \"quoted\" \\ help\nline.",
                samples: [MetricSample(labels: [("path", "/a \"b\" \\ c\nd")], value: "1.5")]),
        ])
        let openMetrics = exposition.text(.openMetrics)
        let classic = exposition.text(.prometheusText)
        #expect(openMetrics.contains(#"# HELP launchprof_test_seconds A \"quoted\" \\ help\nline."#))
        #expect(classic.contains(#"# HELP launchprof_test_seconds A "quoted" \\ help\nline."#))
        #expect(openMetrics.contains(#"path="/a \"b\" \\ c\nd""#) && classic.contains(#"path="/a \"b\" \\ c\nd""#))
        let parsed = try OpenMetricsParser.parse(openMetrics)
        #expect((parsed.first?["labels"] as? [String: String])?["path"] == "/a \"b\" \\ c\nd")
        #expect(try Promtool.checkMetrics(classic).status == 0)
    }

    /// A server answers each scrape in the format its Accept header asks for.
    @Test func acceptHeaderChoosesTheFormat() {
        // Prometheus 2.x's scrape header.
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
            + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        #expect(ExpositionFormat.negotiated(accept: prometheus) == .openMetrics)
        #expect(ExpositionFormat.negotiated(accept: "text/plain;version=0.0.4") == .prometheusText)
        #expect(ExpositionFormat.negotiated(accept: nil) == .prometheusText)
        #expect(ExpositionFormat.negotiated(accept: "*/*") == .prometheusText)
        #expect(ExpositionFormat.negotiated(accept: "application/openmetrics-text; version=0.0.1") == .prometheusText, "not a version written here")
        #expect(ExpositionFormat.negotiated(accept: "text/plain;q=0.9, application/openmetrics-text;q=0.5") == .prometheusText)
        #expect(ExpositionFormat.openMetrics.contentType.hasPrefix("application/openmetrics-text; version=1.0.0"))
        #expect(ExpositionFormat.prometheusText.contentType.hasPrefix("text/plain; version=0.0.4"))
    }
}
