import Foundation
import Testing

@testable import LaunchprofCore
@testable import LaunchprofReport

/// `launchprof bench`, `compare`, `merge` and `export` as a CI job meets them: the built
/// executable, real launches of the bench-app fixture, the folder, the markdown and the exit
/// codes.
///
/// Noise: the regression is made by a blocking sleep in didFinishLaunching (20 ms, tripled by
/// LP_BENCH_SLOWDOWN_PERCENT=200), which a loaded machine barely stretches, and the suite asks
/// for a 50% and 15 ms minimum effect: a quiet rerun stays quiet however busy the machine, the
/// +40 ms regression is far beyond it.
@Suite("bench: the command line", .serialized)
struct BenchCommandTests {
    private func launchprof(_ arguments: [String]) throws -> LaunchprofCLI.Outcome {
        try LaunchprofCLI.run(arguments)
    }

    static func benchApp() throws -> String {
        try FixtureBuilder.build(["bench-app.c"], output: "bench/bench-app")
    }

    /// A suite of three launches (one cold); `slowdown` goes to the first one's environment.
    private func suite(app: String, slowdown: Int) -> String {
        """
        {"version": 1, "minEffectPercent": 50, "minEffectNs": 15000000,
         "launches": [
           {"name": "app", "program": "\(app)", "runs": 5, "warmup": 1,
            "environment": {"LP_BENCH_ITERATIONS": "100000", "LP_BENCH_SLEEP_US": "20000", "LP_BENCH_SLOWDOWN_PERCENT": "\(slowdown)"},
            "thresholds": {"timeToFirstFrameNs": {"maxMedianNs": 10000000000}}},
           {"name": "app-cold", "program": "\(app)", "mode": "cold", "runs": 3, "warmup": 0,
            "environment": {"LP_BENCH_ITERATIONS": "100000", "LP_BENCH_SLEEP_US": "20000"}},
           {"name": "true", "program": "/bin/true", "runs": 5}
         ]}
        """
    }

    /// A bench folder's `suite.json` and every report it names, against their schemas.
    static func expectValidFolder(_ folder: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = folder + "/suite.json"
        try SchemaValidator.expectValid(file: path, against: .benchSummary, sourceLocation: sourceLocation)
        let summary = try BenchSummary.decode(try ReportFiles.read(path), path: path)
        for report in summary.entries.compactMap(\.report) {
            try SchemaValidator.expectValid(file: folder + "/" + report, against: .launchReport, sourceLocation: sourceLocation)
        }
    }

    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lp-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func suiteAgainstABaselineWithAndWithoutARegression() throws {
        let app = try Self.benchApp()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let quiet = directory.appendingPathComponent("suite.json").path
        let slow = directory.appendingPathComponent("suite-slow.json").path
        try suite(app: app, slowdown: 0).write(toFile: quiet, atomically: true, encoding: .utf8)
        try suite(app: app, slowdown: 200).write(toFile: slow, atomically: true, encoding: .utf8)
        try SchemaValidator.expectValid(file: quiet, against: .benchSuite)
        try SchemaValidator.expectValid(file: slow, against: .benchSuite)
        let base = directory.appendingPathComponent("base").path

        // The baseline: a folder with a report per launch and suite.json with inspect's counts.
        let first = try launchprof(["bench", quiet, "--output", base])
        #expect(first.status == 0, "\(first.stderr)\(first.stdout)")
        let files = try FileManager.default.contentsOfDirectory(atPath: base).sorted()
        #expect(files == ["app-cold.json", "app.json", "suite.json", "true.json"])
        try Self.expectValidFolder(base)
        let summary = try BenchSummary.decode(try ReportFiles.read(base + "/suite.json"), path: "suite.json")
        #expect(summary.entries.map(\.name) == ["app", "app-cold", "true"])
        #expect(summary.entries.map(\.mode) == ["warm", "cold", "warm"])
        let truth = try InspectSession(configuration: .init(program: "/bin/true", environment: ProcessInfo.processInfo.environment)).run()
        #expect(summary.entries[2].counts == LaunchCounts(truth))
        let cold = try ReportFiles.readReport(base + "/app-cold.json")
        #expect(cold.mode.cold && cold.runs.count == 3)
        #expect(cold.runs.allSatisfy { $0.residentBeforeBytes != nil })
        let warm = try ReportFiles.readReport(base + "/app.json")
        #expect(!warm.mode.cold && warm.runs.count == 5)
        // The fixture's 20 ms sleep is inside didFinishLaunching: a tight lower bound from the truth.
        #expect(warm.summary.phases.first { $0.name == "didFinishLaunching" }.map { $0.durationNs.min >= 20_000_000 } == true)

        // The same build again: no regression; the cold launch's 3 + 3 runs are too few for a 95%
        // interval, so no verdict (exit 5), not "unchanged".
        let again = directory.appendingPathComponent("again").path
        let quietMarkdown = directory.appendingPathComponent("quiet.md").path
        let metrickit = directory.appendingPathComponent("metrickit").path
        let rerun = try launchprof([
            "bench", quiet, "--output", again, "--baseline", base, "--markdown", quietMarkdown, "--metrickit", metrickit,
            "--format", "json",
        ])
        #expect(rerun.status == 5, "\(rerun.stdout)")
        try Self.expectValidFolder(again)
        try SchemaValidator.expectValid(Array(rerun.stdout.utf8), against: .comparison, "bench --format json")
        #expect(try JSONDecoder().decode(SuiteComparison.self, from: Data(rerun.stdout.utf8)).entries.count == 3)
        // --metrickit: each launch's payloads in its own folder, every run in a bucket.
        for (name, runs) in [("app", 5), ("app-cold", 3)] {
            let metrics = metrickit + "/\(name)/metrics.json"
            try SchemaValidator.expectValid(file: metrics, against: .metricKitMetrics)
            try SchemaValidator.expectValid(file: metrickit + "/\(name)/diagnostics.json", against: .metricKitDiagnostics)
            let payload = try MetricKitPayloadParser.metrics(Data(contentsOf: URL(fileURLWithPath: metrics)))
            #expect(payload.launch["histogrammedTimeToFirstDrawKey"]?.total == runs, "\(name)")
        }
        #expect(try String(contentsOfFile: quietMarkdown, encoding: .utf8).hasPrefix("## launchprof: No verdict: too few runs"))

        // Three times as slow a didFinishLaunching: exit 2, named in the markdown.
        let slower = directory.appendingPathComponent("slower").path
        let slowMarkdown = directory.appendingPathComponent("slow.md").path
        let regressed = try launchprof(["bench", slow, "--output", slower, "--baseline", base, "--markdown", slowMarkdown])
        #expect(regressed.status == 2, "\(regressed.stdout)")
        try Self.expectValidFolder(slower)
        #expect(regressed.stdout.contains("app (warm, 5 vs 5 runs): regression"), "\(regressed.stdout)")
        #expect(regressed.stdout.contains("app-cold (cold, 3 vs 3 runs): no verdict"), "\(regressed.stdout)")
        let markdown = try String(contentsOfFile: slowMarkdown, encoding: .utf8)
        #expect(markdown.hasPrefix("## launchprof: Launch-time regression"))
        #expect(markdown.contains("| `phase:didFinishLaunching` |") && markdown.contains("**regression**"))

        // compare on the folders agrees, in every format; reversed it is an improvement (4).
        let json = try launchprof(["compare", "--format", "json", base, slower])
        #expect(json.status == 2)
        try SchemaValidator.expectValid(Array(json.stdout.utf8), against: .comparison, "compare --format json")
        let comparison = try JSONDecoder().decode(SuiteComparison.self, from: Data(json.stdout.utf8))
        let phase = comparison.entries.first { $0.name == "app" }?.changes.first { $0.key == "phase:didFinishLaunching" }
        #expect(phase?.verdict == .regression)
        #expect((phase?.shift?.shiftNs ?? 0) >= 40_000_000 - 1_000_000, "the truth is +40 ms of sleep")
        #expect(try launchprof(["compare", slower, base]).status == 4)
        #expect(try launchprof(["compare", "--format", "markdown", base, again]).status == 5)
        // A report compared with itself is refused: there is nothing to compare.
        let identical = try launchprof(["compare", base + "/app.json", base + "/app.json"])
        #expect(identical.status == 65, "\(identical.stdout)")
        #expect(identical.stderr.contains("the same report twice"))

        // merge: the two warm reports of the same build are one report of 10 runs.
        let merged = directory.appendingPathComponent("merged.json").path
        let merging = try launchprof(["merge", base + "/app.json", again + "/app.json", "-o", merged])
        #expect(merging.status == 0, "\(merging.stderr)")
        try SchemaValidator.expectValid(file: merged, against: .launchReport)
        let mergedReport = try ReportFiles.readReport(merged)
        #expect(mergedReport.summary.runs == 10 && mergedReport.runs.map(\.index) == Array(0..<10))
        // Different environment, same program and arguments: merge is about the build, not the knob.
        #expect(try launchprof(["merge", base + "/app.json", base + "/true.json", "-o", merged]).status == 65)

        // export: the cold report through Prometheus's parser.
        let exported = try launchprof(["export", "--openmetrics", base + "/app-cold.json"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let samples = try OpenMetricsParser.parse(exported.stdout)
        #expect(samples.contains { ($0["labels"] as? [String: String])?["phase"] == "didFinishLaunching" })
        #expect(samples.allSatisfy { ($0["labels"] as? [String: String])?["mode"] == "cold" })
        #expect(samples.allSatisfy { ($0["labels"] as? [String: String])?["program"] == app })
    }

    /// `mode: prewarm`: each run pairs a prewarmed launch with an ordinary one, as `launchprof
    /// prewarm` does; the report holds both and the saving, and compares like any other.
    @Test func prewarmModeReportsTheSaving() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let suite = directory.appendingPathComponent("suite.json").path
        try """
            {"version": 1, "launches": [{"name": "tapped", "program": "\(try Self.benchApp())", "mode": "prewarm",
              "hold": "50ms", "runs": 3, "warmup": 0}]}
            """.write(toFile: suite, atomically: true, encoding: .utf8)
        try SchemaValidator.expectValid(Array(try ReportFiles.read(suite)), against: .benchSuite)
        let output = directory.appendingPathComponent("out").path
        let outcome = try launchprof(["bench", suite, "-o", output, "--rounds", "2"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("tapped (prewarm, 3 runs"), "titled as what it is: \(outcome.stdout)")
        try Self.expectValidFolder(output)
        let report = try ReportFiles.readReport(output + "/tapped.json")
        #expect(report.runs.count == 3)
        for run in report.runs {
            let prewarm = try #require(run.prewarm, "run \(run.index) is a prewarmed launch")
            #expect(prewarm.holdNs >= 50_000_000)
            #expect(run.metrics.optimizedTimeToFirstFrameNs != nil && prewarm.ordinaryTimeToFirstFrameNs != nil)
        }
        #expect(report.summary.prewarm?.savingNs?.count == 3)
        // The hazard scan ran once and its verdict reached the report written in rounds.
        #expect(report.summary.prewarm?.hazardScanError == nil)
        let summary = try BenchSummary.decode(try ReportFiles.read(output + "/suite.json"), path: "suite.json")
        #expect(summary.entries.first?.mode == "prewarm")
    }

    @Test func failuresAndUnknownVersionsGetTheirStatus() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A launch that fails: exit 1, the others still measured.
        let suite = directory.appendingPathComponent("suite.json").path
        try #"{"version": 1, "launches": [{"name": "fails", "program": "/bin/false", "runs": 1, "warmup": 0}, {"name": "missing", "program": "nonexistent/app", "runs": 1}, {"name": "ok", "program": "/bin/true", "runs": 1, "warmup": 0}]}"#
            .write(toFile: suite, atomically: true, encoding: .utf8)
        try SchemaValidator.expectValid(file: suite, against: .benchSuite)
        let output = directory.appendingPathComponent("out").path
        let failed = try launchprof(["bench", suite, "-o", output])
        #expect(failed.status == 1, "\(failed.stderr)")
        #expect(failed.stderr.contains("fails: 1 of 1 runs failed"))
        #expect(failed.stdout.contains("fails (warm, 1 runs, no baseline, 1 exited with status 1 before readiness): failed"), "\(failed.stdout)")
        #expect(failed.stderr.contains("missing:"))
        #expect(FileManager.default.fileExists(atPath: output + "/ok.json"))
        #expect(!FileManager.default.fileExists(atPath: output + "/missing.json"))
        // The failed launches are in suite.json too, with why.
        try Self.expectValidFolder(output)
        let summary = try BenchSummary.decode(try ReportFiles.read(output + "/suite.json"), path: "suite.json")
        #expect(summary.entries.first { $0.name == "missing" }.map { $0.report == nil && $0.error != nil } == true)

        // A program that is not there at all is refused before any launch, as run refuses it.
        try #"{"version": 1, "launches": [{"name": "ok", "program": "/bin/true", "runs": 1}, {"name": "gone", "program": "/nonexistent/app", "runs": 1}]}"#
            .write(toFile: suite, atomically: true, encoding: .utf8)
        let gone = try launchprof(["bench", suite, "-o", output + "-gone"])
        #expect(gone.status == 66, "\(gone.stderr)")
        #expect(gone.stderr.contains("gone: Program \"/nonexistent/app\""), "\(gone.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output + "-gone"))

        // A suite mistake is a usage error naming the key.
        try #"{"version": 1, "launches": [{"name": "x", "program": "/bin/true", "mode": "hot"}]}"#
            .write(toFile: suite, atomically: true, encoding: .utf8)
        let mistake = try launchprof(["bench", suite, "-o", output])
        #expect(mistake.status == 64)
        #expect(try SchemaValidator.problems(Array(try ReportFiles.read(suite)), against: .benchSuite) != nil, "the schema refuses it too")
        #expect(mistake.stderr.contains("launches[0].mode") && mistake.stderr.contains("prewarm"), "\(mistake.stderr)")

        // A report of a schema version launchprof does not know is refused by compare and merge.
        let report = output + "/ok.json"
        let future = directory.appendingPathComponent("future.json").path
        let text = try String(contentsOfFile: report, encoding: .utf8)
            .replacingOccurrences(of: "\"schemaVersion\":1", with: "\"schemaVersion\":7")
        try text.write(toFile: future, atomically: true, encoding: .utf8)
        #expect(try SchemaValidator.problems(Array(text.utf8), against: .launchReport) != nil, "schema version 7 is not this schema's")
        for arguments in [["compare", report, future], ["merge", report, future, "-o", output + "/m.json"], ["export", "--openmetrics", future]] {
            let refused = try launchprof(arguments)
            #expect(refused.status == 65, "\(arguments)")
            #expect(refused.stderr.contains("schema version 7"), "\(refused.stderr)")
        }
        #expect(try launchprof(["compare", report, output]).status == 64)
    }
}

extension BenchCommandTests {
    /// `--rounds`: two launches of one suite take turns (the fixture's own truth lines, in the
    /// order they were written, alternate, A B then B A), each report keeps all its runs numbered 0…n−1, and
    /// `compare` on the two reports finds the 3× slower one.
    @Test func roundsInterleaveLaunchesOfOneSuite() throws {
        let app = try Self.benchApp()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let truth = directory.appendingPathComponent("truth").path
        let suite = directory.appendingPathComponent("suite.json").path
        func launch(_ name: String, _ slowdown: Int) -> String {
            """
            {"name": "\(name)", "program": "\(app)", "runs": 5, "warmup": 1, "environment": {"LP_BENCH_ITERATIONS": "100000",
             "LP_BENCH_SLEEP_US": "20000", "LP_BENCH_SLOWDOWN_PERCENT": "\(slowdown)", "LP_BENCH_TAG": "\(name)", "LP_FIXTURE_TRUTH": "\(truth)"}}
            """
        }
        try #"{"version": 1, "minEffectPercent": 50, "minEffectNs": 15000000, "launches": [\#(launch("base", 0)), \#(launch("new", 200))]}"#
            .write(toFile: suite, atomically: true, encoding: .utf8)
        try SchemaValidator.expectValid(file: suite, against: .benchSuite)
        let output = directory.appendingPathComponent("out").path
        let outcome = try launchprof(["bench", suite, "--rounds", "5", "-o", output])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        try Self.expectValidFolder(output)
        let order = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ")[1] }
        // Warm-ups run in the first round: base ×2, new ×2, then one each per round, every
        // other round in the reverse order so neither is always the second.
        #expect(order == ["base", "base", "new", "new", "new", "base", "base", "new", "new", "base", "base", "new"], "\(order)")
        var sessions: Set<String?> = []
        for name in ["base", "new"] {
            let report = try ReportFiles.readReport(output + "/\(name).json")
            #expect(report.runs.map(\.index) == [0, 1, 2, 3, 4])
            #expect(report.mode.runs == 5 && report.mode.warmup == 1)
            // Each run says its round, and both launches the one session they were made in.
            #expect(report.runs.map(\.round) == [0, 1, 2, 3, 4])
            sessions.formUnion(report.runs.map(\.session))
        }
        #expect(sessions.count == 1 && sessions.first??.count == 32, "\(sessions)")
        let comparison = try launchprof(["compare", output + "/base.json", output + "/new.json"])
        #expect(comparison.status == 2, "\(comparison.stdout)")
        // Paired on request: the five rounds' differences; the JSON and the text say so.
        let paired = try launchprof(["compare", "--statistic", "paired", "--format", "json", output + "/base.json", output + "/new.json"])
        let entry = try #require(try JSONDecoder().decode(SuiteComparison.self, from: Data(paired.stdout.utf8)).entries.first)
        let work = try #require(entry.changes.first { $0.key == "phase:didFinishLaunching" })
        #expect(work.statistic == .paired && work.pairs == 5, "\(work)")
        #expect(entry.changes.first { $0.key == "timeToMainNs" }?.statistic == .paired)
        let independent = try launchprof(["compare", "--format", "json", output + "/base.json", output + "/new.json"])
        #expect(!independent.stdout.contains("\"paired\""), "the default is the independent statistic")
        // A bench without rounds has no session to pair on: the reports say nothing of one.
        let single = directory.appendingPathComponent("single").path
        #expect(try launchprof(["bench", suite, "-o", single]).status == 0)
        #expect(try ReportFiles.readReport(single + "/base.json").runs.allSatisfy { $0.session == nil && $0.round == nil })
        #expect(try launchprof(["bench", suite, "--rounds", "0", "-o", output]).status == 64)
    }
}
