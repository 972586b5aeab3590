import Foundation
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// Issue 22: every run says how it ended — in the text, the JSON, the exports — and a run that
/// did not reach readiness has no first frame (never its timeout). Each case through the CLI.
@Suite("run: outcomes told truthfully", .serialized)
struct RunOutcomeTests {
    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lp-outcome-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func runs(_ json: String) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
        return try #require(object?["runs"] as? [[String: Any]])
    }

    @Test func timeoutIsNamedAndIsNoFirstFrameInAnyOutput() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("r.json").path
        let trace = directory.appendingPathComponent("t.json").path
        let metrickit = directory.appendingPathComponent("mk").path
        let marker = RunHarness.marker()
        let outcome = try LaunchprofCLI.run([
            "run", "-r", "2", "--timeout", "1", "--ready", "hook", "--json", json, "--trace", trace,
            "--metrickit", metrickit, "--env", marker, try RunFixtures.program("never-ready"),
        ])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("2 of 2 runs timed out after 1.00 s waiting for the first-frame hook"), "\(outcome.stdout)")
        #expect(!outcome.stdout.contains("time to first frame  median"), "the timeout is not a first frame: \(outcome.stdout)")
        #expect(outcome.stdout.contains("time to first frame  none: no run reached readiness"))
        #expect(RunHarness.processes(withMarker: marker).isEmpty)

        try SchemaValidator.expectValid(file: json, against: .launchReport)
        for run in try runs(json) {
            let metrics = try #require(run["metrics"] as? [String: Any])
            #expect(metrics["timeToFirstFrameNs"] == nil && metrics["extendedLaunchNs"] == nil, "\(metrics)")
            #expect(metrics["timeToMainNs"] != nil, "what was observed stays")
            let ending = try #require(run["outcome"] as? [String: Any])
            #expect(ending["kind"] as? String == "timedOut")
            #expect(ending["waitedFor"] as? String == "the first-frame hook")
            #expect(ending["timeoutNs"] as? Int == 1_000_000_000)
        }

        // OpenMetrics: counted as timeouts, no first-frame family.
        let export = try LaunchprofCLI.run(["export", "--openmetrics", json])
        #expect(export.status == 0, "\(export.stderr)")
        let samples = try OpenMetricsParser.parse(export.stdout)
        #expect(!samples.contains { ($0["family"] as? String) == "launchprof_time_to_first_frame_seconds" })
        let timeouts = samples.first {
            $0["name"] as? String == "launchprof_runs_total" && ($0["labels"] as? [String: String])?["outcome"] == "timeout"
        }
        #expect(timeouts?["value"] as? Double == 2)

        // MetricKit: a timeout is not a launch.
        let payload = try MetricKitPayloadParser.metrics(Data(contentsOf: URL(fileURLWithPath: metrickit + "/metrics.json")))
        #expect((payload.launch["histogrammedTimeToFirstDrawKey"]?.total ?? 0) == 0)

        // The trace names the outcome on each run's track.
        let traceText = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(traceText.contains("timed out after 1.00 s waiting for the first-frame hook"))
    }

    /// The timeout names the readiness rule it waited for.
    @Test func timeoutNamesTheOutputLineItWaitedFor() throws {
        let outcome = try LaunchprofCLI.run([
            "run", "-r", "1", "--timeout", "1", "--ready", "stdout:^up$", try RunFixtures.program("never-ready"),
        ])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.contains("1 of 1 runs timed out after 1.00 s waiting for a line on stdout matching '^up$'"), "\(outcome.stdout)")
    }

    /// Some runs failing: one line per way they failed, and the metric over the others only.
    @Test func mixedOutcomesReadAsTheSummarySaysThem() throws {
        var runs = (0..<3).map { ExportSamples.run(index: $0, firstFrameMs: 10 + UInt64($0), tasks: false) }
        runs[0].outcome = .completed
        runs[1].outcome = .completed
        runs[2].outcome = .timedOut(after: 1_000_000_000, waitingFor: "the first-frame hook")
        runs[2].metrics.timeToFirstFrameNs = nil
        let report = ExportSamples.report(runs)
        let text = try TextWaterfallRenderer().render(report)
        #expect(text.contains("1 of 3 runs timed out after 1.00 s waiting for the first-frame hook"), "\(text)")
        let firstFrame = try #require(text.split(separator: "\n").first { $0.hasPrefix("time to first frame") })
        #expect(firstFrame.contains("(2 of 3 runs)"), "\(firstFrame)")
        #expect(firstFrame.contains("max 11.0 ms"), "the timed-out run is not in the statistics: \(firstFrame)")
        #expect(report.summary.outcomes?.map(\.runs) == [2, 1])
    }

    @Test func crashNamesItsSignalAndHasNoFirstFrame() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("r.json").path
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", json, try RunFixtures.program("crash")])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.contains("2 of 2 runs crashed (SIGSEGV)"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("crash stack: lp_crashing_constructor"), "the stack that exists stays")
        #expect(!outcome.stdout.contains("time to first frame  median"))
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        for run in try runs(json) {
            #expect((run["metrics"] as? [String: Any])?["timeToFirstFrameNs"] == nil)
            let ending = try #require(run["outcome"] as? [String: Any])
            #expect(ending["kind"] as? String == "crashed")
            #expect(ending["signal"] as? String == "SIGSEGV")
            #expect(ending["signalNumber"] as? Int == Int(SIGSEGV))
        }
        // The HTML page says it too, drawn by Chromium without a console message.
        let html = directory.appendingPathComponent("r.html").path
        let rendered = try LaunchprofCLI.run(["report", json, "--html", html])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let page = try HeadlessChromium.load(html, screenshot: directory.appendingPathComponent("r.png").path, height: 600)
        #expect(page.dom.contains("2 crashed (SIGSEGV)"), "the Metrics section names the outcome")
        #expect(page.consoleLines.isEmpty, "\(page.consoleLines)")
    }

    @Test func earlyExitGivesItsStatus() throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("lp-exit-\(UUID().uuidString).json").path
        defer { unlink(json) }
        let outcome = try LaunchprofCLI.run([
            "run", "-r", "2", "--json", json, "--env", "LP_FIRST_FRAME=0", "--env", "LP_EXIT_CODE=3",
            try RunFixtures.app(),
        ])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.contains("2 of 2 runs exited with status 3 before readiness"), "\(outcome.stdout)")
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        for run in try runs(json) {
            let ending = try #require(run["outcome"] as? [String: Any])
            #expect(ending["kind"] as? String == "exitedEarly")
            #expect(ending["exitCode"] as? Int == 3)
            #expect(ending["beforeReadiness"] as? Bool == true)
            // The exit really happened: its time is kept, but it is no first frame.
            let metrics = try #require(run["metrics"] as? [String: Any])
            #expect(metrics["exitNs"] != nil && metrics["timeToFirstFrameNs"] == nil)
        }
        // A clean run of the same program is completed, exit 0.
        let clean = try LaunchprofCLI.run(["run", "-r", "1", try RunFixtures.app()])
        #expect(clean.status == 0, "\(clean.stdout)")
        #expect(!clean.stdout.contains(" of 1 runs "))
    }

    /// A program whose library is missing never runs its own code: the loader exits 127.
    @Test func missingLibraryFailsToStart() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The app finds liblpmissing.so beside itself ($ORIGIN); a copy elsewhere does not.
        let built = try RunFixtures.app(libraries: ["lpmissing"], directory: "run-missing")
        let copy = directory.appendingPathComponent("app").path
        try FileManager.default.copyItem(atPath: built, toPath: copy)
        let json = directory.appendingPathComponent("r.json").path
        let outcome = try LaunchprofCLI.run(["run", "-r", "1", "--json", json, copy])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("1 of 1 runs failed to start: the dynamic loader exited with status 127"), "\(outcome.stdout)")
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let ending = try #require(try runs(json).first?["outcome"] as? [String: Any])
        #expect(ending["kind"] as? String == "failedToStart")
        #expect(ending["exitCode"] as? Int == 127)
        // The same program beside its library starts.
        #expect(try LaunchprofCLI.run(["run", "-r", "1", built]).status == 0)
    }

    /// MetricKit's launch histograms hold only the runs that completed; a crash or a timeout
    /// among them is left out (its first frame, if any, is no launch).
    @Test func metricKitCountsOnlyCompletedLaunches() throws {
        var runs = (0..<4).map { ExportSamples.run(index: $0, firstFrameMs: 10 + UInt64($0), tasks: false) }
        runs[1].outcome = RunOutcome(kind: .crashed, signal: "SIGABRT", signalNumber: 6)
        runs[2].outcome = .timedOut(after: 1_000_000_000, waitingFor: "the first-frame hook")
        runs[0].outcome = .completed
        let report = ExportSamples.report(runs)
        let builder = MetricKitPayloadBuilder(context: ExportSamples.context, launchDiagnosticThresholdNs: 0)
        let payload = builder.metricPayload(report)
        let histogram = try #require(payload.applicationLaunchMetrics?.histogrammedTimeToFirstDrawKey)
        #expect(histogram.totalCount == 2)
        #expect(builder.diagnosticPayload(report).appLaunchDiagnostics?.count == 2)
        #expect(report.summary.failedRuns == 2)
    }
}
