import Foundation
import Testing

/// `launchprof prewarm` as a user meets it: usage errors, the side-by-side text, the report.
@Suite("prewarm: the command line", .serialized)
struct PrewarmCommandTests {
    private func launchprof(_ arguments: [String]) throws -> LaunchprofCLI.Outcome {
        try LaunchprofCLI.run(arguments)
    }

    @Test func badOptionsAreUsageErrors() throws {
        let cases: [([String], String)] = [
            (["prewarm", "--freeze-at", "later", "/bin/true"], "'later' is invalid for '--freeze-at"),
            (["prewarm", "--hold", "soon", "/bin/true"], "\"soon\" is not a duration"),
            (["prewarm", "--ttl", "1s", "/bin/true"], "--ttl needs --pool"),
            (["prewarm", "--pool", "65", "/bin/true"], "--pool takes 0 to 64"),
            (["prewarm"], "Missing PROGRAM"),
            (["run", "--resume-cycles", "2000", "/bin/true"], "--resume-cycles takes 0 to 1000"),
        ]
        for (arguments, message) in cases {
            let outcome = try launchprof(arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
        }
    }

    @Test func showsOrdinaryAndPrewarmedSideBySideAndWritesTheReport() throws {
        let json = NSTemporaryDirectory() + "prewarm-\(UUID().uuidString).json"
        defer { unlink(json) }
        let outcome = try launchprof([
            "prewarm", "--runs", "2", "--hold", "50ms", "--env", "PW_INIT_US=10000", "--env", "PW_POST_US=2000",
            "--json", json, try PrewarmHarness.app(),
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("ordinary launch       prewarmed launch (from the resume)"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("saving               p50"))
        #expect(outcome.stdout.contains("hazards              none: prewarm-safe"))
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
        let summary = report?["summary"] as? [String: Any]
        let prewarm = summary?["prewarm"] as? [String: Any]
        #expect((prewarm?["savingNs"] as? [String: Any])?["count"] as? Int == 2)
        #expect(prewarm?["prewarmSafe"] as? Bool == true)
        #expect((report?["runs"] as? [[String: Any]])?.count == 2)
    }

    @Test func aMissingProgramIsStatus66AsInRun() throws {
        let outcome = try launchprof(["prewarm", "--hold", "1ms", "launchprof-no-such-program"])
        #expect(outcome.status == 66)
    }
}
