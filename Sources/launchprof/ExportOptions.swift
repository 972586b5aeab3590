import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

#if canImport(Glibc)
import Glibc
#endif

/// `run` and `prewarm`'s documents besides the LaunchReport, made from every run at the end:
/// MetricKit payloads, a Chrome trace, the HTML page.
struct ExportOptions: ParsableArguments {
    @OptionGroup var metricKit: MetricKitOptions

    @Option(help: ArgumentHelp(
        "Write a Chrome Trace Event JSON file (open it in ui.perfetto.dev or chrome://tracing).", valueName: "file"))
    var trace: String?

    @Option(help: ArgumentHelp("Write the HTML report to this file (as `launchprof report --html` does).", valueName: "file"))
    var html: String?

    func validate() throws {
        try OutputChecks.file(trace, option: "--trace")
        try OutputChecks.file(html, option: "--html")
    }

    /// The outputs, as the user wrote them, for `OutputChecks.distinct`.
    var outputs: [(shown: String, path: String?)] {
        [("--trace \(trace ?? "")", trace), ("--html \(html ?? "")", html)]
    }

    /// Whether the exports need every run kept (`RunCollector`).
    var keepsRuns: Bool { metricKit.metrickit != nil || trace != nil || html != nil }

    /// Writes the requested exports of `report`, whose runs began at `beganAtSeconds`.
    func write(_ report: LaunchReport, beganAtSeconds: Int64) throws {
        if let trace {
            try ReportFiles.write(try TraceEventRenderer().renderBytes(report), to: trace)
            Terminal.write(2, "launchprof: trace written to \(trace)\n")
        }
        if let html {
            try ReportFiles.write(Array(try HTMLReportRenderer().render(report).utf8), to: html)
            Terminal.write(2, "launchprof: HTML report written to \(html)\n")
        }
        if let directory = metricKit.metrickit {
            try metricKit.write(report, into: directory, beganAtSeconds: beganAtSeconds, endedAtSeconds: Int64(time(nil)))
            Terminal.write(2, "launchprof: MetricKit payloads written to \(directory)\n")
        }
    }
}
