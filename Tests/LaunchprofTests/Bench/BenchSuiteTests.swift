import Testing

@testable import LaunchprofCore
@testable import LaunchprofReport

@Suite("bench: suite files")
struct BenchSuiteTests {
    private func parse(_ text: String) throws(BenchError) -> BenchSuite {
        try BenchSuite.parse(Array(text.utf8), path: "/ci/suite.json")
    }

    private func error(_ text: String) -> String {
        do {
            _ = try parse(text)
            return "parsed"
        } catch {
            return error.description
        }
    }

    /// A suite that sets every key there is (BenchSchemaTests holds the schema to the same keys).
    static let everyKey = """
        {"$schema": "../docs/formats/schema/bench-suite.schema.json", "version": 1, "confidence": 0.9, "minEffectPercent": 8,
         "minEffectNs": 250000, "reference": "tool",
         "launches": [
           {"name": "app", "program": "bin/app", "arguments": ["--fast"], "environment": {"A": "1"},
            "cwd": "work", "ready": "hook", "mode": "cold", "runs": 7, "warmup": 2, "timeout": 2.5,
            "minEffectPercent": 200, "minEffectNs": 5000000,
            "thresholds": {"timeToFirstFrameNs": {"maxMedianNs": 50000000, "maxRegressionPercent": 10},
                           "phase:didFinishLaunching": {"maxRegressionPercent": 20}}},
           {"name": "tool", "program": "true"},
           {"name": "tapped", "program": "true", "mode": "prewarm", "hold": "uniform:100ms-2s"}]}
        """

    /// What each mistake's error says; BenchSchemaTests checks the schema refuses them too.
    static let mistakes: [(String, String)] = [
        (#"{"launches": []}"#, "missing 'version'"),
        (#"{"version": 2, "launches": []}"#, "version 2 is not known"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "run": 3}]}"#, "at launches[0]: unknown key 'run'"),
        (#"{"version": 1, "lanches": []}"#, "unknown key 'lanches'"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "hold": "2s"}]}"#, "only a prewarm launch is held"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "mode": "prewarm", "hold": "soon"}]}"#, "launches[0].hold"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "mode": "hot"}]}"#, "the modes are warm, cold and prewarm"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "runs": 0}]}"#, "launches[0].runs"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "runs": "5"}]}"#, "expected a number, not a string"),
        (#"{"version": 1, "launches": [{"name": "a/b", "program": "true"}]}"#, "it names a file"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true"}, {"name": "a", "program": "false"}]}"#, "names two launches"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "thresholds": {"timeToMain": {}}}]}"#, "is not a metric"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "thresholds": {"exitNs": {"maxMedian": 1}}}]}"#, "unknown key 'maxMedian'"),
        (#"{"version": 1, "launches": [{"name": "a", "program": "true", "ready": "soon"}]}"#, "launches[0].ready"),
        (#"{"version": 1, "$schema": 3, "launches": [{"name": "a", "program": "true"}]}"#, "$schema"),
        ("{\"version\": 1,", "it is not JSON"),
    ]

    @Test func everyKeyIsRead() throws {
        let suite = try parse(Self.everyKey)
        #expect(suite.settings.confidence == 0.9)
        #expect(suite.settings.minEffectPercent == 8)
        #expect(suite.settings.minEffectNs == 250_000)
        #expect(suite.settings.reference == "tool")
        let app = suite.launches[0]
        #expect(app.arguments == ["--fast"] && app.environment == ["A": "1"] && app.cwd == "work")
        #expect(app.ready == .hook && app.mode == .cold && app.runs == 7 && app.warmup == 2)
        #expect(app.timeoutNs == 2_500_000_000)
        #expect(app.minEffectPercent == 200 && app.minEffectNs == 5_000_000)
        #expect(app.thresholds["timeToFirstFrameNs"] == .init(maxMedianNs: 50_000_000, maxRegressionPercent: 10))
        #expect(app.thresholds["phase:didFinishLaunching"]?.maxRegressionPercent == 20)
        let tool = suite.launches[1]
        #expect(tool.mode == .warm && tool.runs == 20 && tool.warmup == 1 && tool.ready == .automatic)
        #expect(tool.hold == .fixed(ns: 500_000_000), "the default hold")
        let tapped = suite.launches[2]
        #expect(tapped.mode == .prewarm && tapped.hold == .uniform(minimumNs: 100_000_000, maximumNs: 2_000_000_000))
        // Paths with a slash resolve against the suite's folder; bare names stay PATH names.
        let runner = BenchRunner(suite: suite, outputDirectory: "/tmp/x", inheritedEnvironment: [:])
        let configuration = runner.configuration(app)
        #expect(configuration.program == "/ci/bin/app")
        #expect(configuration.workingDirectory == "/ci/work")
        #expect(configuration.cold)
        #expect(runner.configuration(tool).program == "true")
        #expect(!runner.configuration(tool).cold)
    }

    @Test func mistakesAreNamedWithTheirPlace() {
        for (text, expected) in Self.mistakes {
            let message = error(text)
            #expect(message.contains(expected), "\(text): \(message)")
            #expect(message.contains("/ci/suite.json") || message.contains("Mode"), "\(text): \(message)")
        }
    }

    /// A `ready` pattern that does not compile is the suite's mistake (exit 64), naming the value
    /// and where it is, not a launch that "cannot be executed" once the bench has started.
    @Test func aBadReadyPatternIsAUsageErrorNamingIt() {
        let text = #"{"version": 1, "launches": [{"name": "a", "program": "true", "ready": "stdout:("}]}"#
        #expect {
            _ = try parse(text)
        } throws: { error in
            let error = error as? BenchError
            return error?.exitCause == .usage && error?.description.contains("launches[0].ready") == true
                && error?.description.contains("'stdout:('") == true && error?.description.contains("does not compile") == true
        }
    }
}
