import Foundation
import Testing

/// Issue 22: `prewarm` fails visibly on stdout, with why, and exits non-zero; a failed pair has
/// no saving; a prewarm report keeps its kind downstream (observer reason, export).
@Suite("prewarm: failures and kind", .serialized)
struct PrewarmFailureTests {
    private func report(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    @Test func hangingProgramHasNoSavingAndSaysItTimedOut() throws {
        let json = NSTemporaryDirectory() + "prewarm-hang-\(UUID().uuidString).json"
        defer { unlink(json) }
        let marker = RunHarness.marker()
        let outcome = try LaunchprofCLI.run([
            "prewarm", "-r", "2", "--timeout", "1", "--hold", "10ms", "--no-hazard-scan", "--env", marker,
            "--json", json, try RunFixtures.program("never-ready"),
        ])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        let wait = "timed out after 1.00 s waiting for the first-frame hook or the program's exit"
        #expect(outcome.stdout.contains("2 of 2 prewarmed launches " + wait), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("2 of 2 ordinary launches " + wait), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("saving               none: no pair in which both launches completed"))
        #expect(!outcome.stdout.contains("saving               p50"))
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let document = try report(json)
        let summary = try #require(document["summary"] as? [String: Any])
        #expect((summary["prewarm"] as? [String: Any])?["savingNs"] == nil)
        for run in document["runs"] as? [[String: Any]] ?? [] {
            let prewarm = try #require(run["prewarm"] as? [String: Any])
            #expect(prewarm["savingNs"] == nil && prewarm["ordinaryTimeToFirstFrameNs"] == nil, "\(prewarm)")
            #expect((prewarm["ordinaryOutcome"] as? [String: Any])?["kind"] as? String == "timedOut")
            #expect((run["metrics"] as? [String: Any])?["optimizedTimeToFirstFrameNs"] == nil)
        }
    }

    @Test func crashingProgramFailsOnStdoutWithTheSignal() throws {
        let json = NSTemporaryDirectory() + "prewarm-crash-\(UUID().uuidString).json"
        defer { unlink(json) }
        let outcome = try LaunchprofCLI.run([
            "prewarm", "-r", "2", "--hold", "10ms", "--no-hazard-scan", "--json", json, try RunFixtures.program("crash"),
        ])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let runs = try #require(try report(json)["runs"] as? [[String: Any]])
        #expect(runs.count == 2 && runs.allSatisfy { ($0["outcome"] as? [String: Any])?["signal"] as? String == "SIGSEGV" })
        #expect(outcome.stdout.contains("no prewarmed launch was frozen at main"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("2 of 2 prewarmed launches crashed (SIGSEGV)"), "\(outcome.stdout)")
        #expect(!outcome.stdout.contains("saving"))
    }

    /// A bench launch of mode prewarm is headed prewarm even when no launch was frozen, with
    /// how its runs failed, on stdout; the bench exits 1.
    @Test func benchHeadsAFailedPrewarmLaunchAsPrewarm() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-bench-pw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let suite = directory.appendingPathComponent("suite.json").path
        try """
            {"version": 1, "launches": [{"name": "pcrash", "program": "\(try RunFixtures.program("crash"))", "mode": "prewarm",
              "hold": "10ms", "runs": 2, "warmup": 0}]}
            """.write(toFile: suite, atomically: true, encoding: .utf8)
        let outcome = try LaunchprofCLI.run(["bench", suite, "-o", directory.appendingPathComponent("out").path])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("pcrash (prewarm, 2 runs, no baseline, 2 crashed (SIGSEGV)): failed"), "\(outcome.stdout)")
    }

    /// `--ttl 0` expires every frozen process at once: every launch misses, so there is no
    /// prewarm part to show (not "0 ns").
    @Test func poolWhoseProcessesAllExpireShowsNoPrewarmPart() throws {
        let json = NSTemporaryDirectory() + "prewarm-ttl-\(UUID().uuidString).json"
        defer { unlink(json) }
        let outcome = try LaunchprofCLI.run([
            "prewarm", "-r", "2", "--pool", "1", "--ttl", "0", "--hold", "30ms", "--no-hazard-scan", "--json", json,
            try PrewarmHarness.app(),
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(!outcome.stdout.contains("prewarm part         0 ns"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("prewarm part         none: no launch found a frozen process (0 of 2 hit): every frozen process expired first (--ttl)"), "\(outcome.stdout)")
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let summary = try #require(try report(json)["summary"] as? [String: Any])
        let prewarm = try #require(summary["prewarm"] as? [String: Any])
        #expect(prewarm["prewarmNs"] == nil && prewarm["holdNs"] == nil, "misses have no prewarm part: \(prewarm)")
    }

    /// The report says why the observer is ptrace (no option was given), and `export` labels it
    /// prewarm with the optimized time and the saving.
    @Test func prewarmReportKeepsItsKindInExport() throws {
        let json = NSTemporaryDirectory() + "prewarm-kind-\(UUID().uuidString).json"
        defer { unlink(json) }
        let outcome = try LaunchprofCLI.run([
            "prewarm", "-r", "2", "--hold", "20ms", "--no-hazard-scan", "--env", "PW_INIT_US=5000", "--json", json,
            try PrewarmHarness.app(),
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let mode = try #require(try report(json)["mode"] as? [String: Any])
        let reason = try #require(mode["observerReason"] as? String)
        #expect(!reason.contains("--observer"), "no option was given: \(reason)")
        #expect(reason.contains("prewarm") && reason.contains("main"), "\(reason)")
        let export = try LaunchprofCLI.run(["export", "--openmetrics", json])
        #expect(export.status == 0, "\(export.stderr)")
        let samples = try OpenMetricsParser.parse(export.stdout)
        #expect(samples.allSatisfy { ($0["labels"] as? [String: String])?["mode"] == "prewarm" })
        let families = Set(samples.compactMap { $0["family"] as? String })
        #expect(families.contains("launchprof_optimized_time_to_first_frame_seconds"))
        #expect(families.contains("launchprof_prewarm_saving_seconds"))
        #expect(!families.contains("launchprof_time_to_first_frame_seconds"), "a prewarmed launch has only the optimized time")
    }
}
