import Foundation
import Testing

/// `launchprof run` as a user meets it: the built executable, its exit statuses, its messages
/// and the report file.
@Suite("run: the command line", .serialized)
struct RunCommandTests {
    private func launchprof(_ arguments: [String]) throws -> LaunchprofCLI.Outcome {
        try LaunchprofCLI.run(arguments)
    }

    @Test func badInputsGetOneLineAndTheirStatus() throws {
        let cases: [([String], Int32, String)] = [
            (["run", "launchprof-no-such-program"], 66, "is not found in PATH"),
            (["run", "/tmp"], 66, "is a directory"),
            (["run", "--input", "/nonexistent/input", "/bin/true"], 64, "--input /nonexistent/input"),
            (["run", "--cwd", "/nonexistent/dir", "/bin/true"], 64, "--cwd /nonexistent/dir"),
            (["run", "--ready", "stdout:(", "/bin/true"], 64, "'stdout:(' is invalid for '--ready"),
            (["run", "--runs", "0", "/bin/true"], 64, "the number of runs is 1 to 100000"),
        ]
        for (arguments, status, message) in cases {
            let outcome = try launchprof(arguments)
            #expect(outcome.status == status, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
        }
    }

    @Test func failedRunsExitOneUnlessIgnored() throws {
        let failing = try launchprof(["run", "--runs", "2", "/bin/false"])
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("2 of 2 runs failed"))
        let ignored = try launchprof(["run", "--runs", "2", "--ignore-failure", "/bin/false"])
        #expect(ignored.status == 0)
        #expect(ignored.stdout.contains("exit"))
    }

    /// `--json` writes the LaunchReport with its public names; the child's arguments are its
    /// own, options after the program included.
    @Test func jsonReportHasThePublicNames() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lp-report-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try launchprof(["run", "--runs", "3", "--json", path, "/bin/echo", "--runs", "x"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try SchemaValidator.expectValid(data, against: .launchReport, path)
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(report.keys).isSuperset(of: ["schemaVersion", "target", "host", "mode", "runs", "summary"]))
        let target = try #require(report["target"] as? [String: Any])
        #expect(target["arguments"] as? [String] == ["--runs", "x"])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.count == 3)
        for run in runs {
            #expect(Set(run.keys).isSuperset(of: ["index", "pid", "exitStatus", "phases", "metrics"]))
            let metrics = try #require(run["metrics"] as? [String: Any])
            #expect(Set(metrics.keys).isSuperset(of: ["timeToMainNs", "timeToFirstFrameNs", "extendedLaunchNs", "exitNs"]))
        }
        let summary = try #require(report["summary"] as? [String: Any])
        let main = try #require(summary["timeToMainNs"] as? [String: Any])
        #expect(Set(main.keys).isSuperset(of: ["min", "median", "p90", "p99", "max", "mean", "stddev"]))
    }
}
