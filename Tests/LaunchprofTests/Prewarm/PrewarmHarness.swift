import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// Runs `launchprof prewarm` in-process (real tracer, real children) and collects every run.
enum PrewarmHarness {
    struct Outcome {
        var runs: [LaunchRun]
        var summary: LaunchSummary
    }

    /// prewarm-app.c, optionally stripped (`-s`, with `-rdynamic` so `.dynsym` names its functions
    /// when `exported`).
    static func app(stripped: Bool = false, exported: Bool = false) throws -> String {
        let name = "prewarm-app" + (stripped ? "-stripped" : "") + (exported ? "-exported" : "")
        return try FixtureBuilder.build(
            ["prewarm-app.c"], output: "prewarm/\(name)",
            flags: (stripped ? ["-s"] : []) + (exported ? ["-rdynamic"] : []))
    }

    static func run(
        _ program: String, runs: Int = 1, environment: [String: String] = [:],
        configure: (inout PrewarmConfiguration) -> Void = { _ in }
    ) throws -> Outcome {
        var run = RunConfiguration(program: program, arguments: [])
        run.runs = runs
        run.inheritedEnvironment = ProcessInfo.processInfo.environment
        run.environment = environment
        var configuration = PrewarmConfiguration(run: run)
        configure(&configuration)
        let session = try PrewarmSession(configuration: configuration)
        let output = InMemoryReportOutput()
        let report = try LaunchPipeline(session, sinks: [StreamingReportSink(output: output)]).run()[0].get()
        try SchemaValidator.expectValid(output.bytes, against: .launchReport, "prewarm report of \(program)")
        // The runs as the report file holds them (the encoder under test too).
        let decoded = try JSONDecoder().decode(LaunchReport.self, from: Data(output.bytes))
        return Outcome(runs: decoded.runs, summary: report.summary)
    }

    /// Truth lines of prewarm-app (`<kind> <reason> <begin> <end>`), by kind and reason, in order.
    static func truth(_ path: String) throws -> [String: [(begin: UInt64, end: UInt64)]] {
        var result: [String: [(UInt64, UInt64)]] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 4, let begin = UInt64(fields[2]), let end = UInt64(fields[3]) else { continue }
            result["\(fields[0]) \(fields[1])", default: []].append((begin, end))
        }
        return result
    }

    static func truthFile() -> String {
        NSTemporaryDirectory() + "prewarm-truth-\(UUID().uuidString)"
    }
}
