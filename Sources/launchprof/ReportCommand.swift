import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `launchprof report REPORT.json --html OUT.html`: turns a saved LaunchReport into a
/// self-contained HTML page (and, with `--trace`, a Chrome trace).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render a LaunchReport (from run --json) as a self-contained HTML page or a Chrome trace.",
        discussion: """
            Examples:
              launchprof report app.json --html app.html --trace app-trace.json

            The HTML file needs no network: open it in any browser. The trace opens in \
            ui.perfetto.dev or chrome://tracing.

            \(ExitCause.summary([.success, .usage, .badInput, .noInput, .cannotCreate, .ioError]))
            """)

    @Argument(help: "A LaunchReport JSON file, as `launchprof run --json` writes it.")
    var report: String

    @Option(help: ArgumentHelp("Write the HTML report to this file (atomically).", valueName: "file"))
    var html: String?

    @Option(help: ArgumentHelp("Write a Chrome Trace Event JSON file.", valueName: "file"))
    var trace: String?

    func validate() throws {
        guard html != nil || trace != nil else {
            throw ValidationError("Nothing to write: give --html FILE and/or --trace FILE.")
        }
        try OutputChecks.file(html, option: "--html")
        try OutputChecks.file(trace, option: "--trace")
        let outputs: [(shown: String, path: String?)] = [("--html \(html ?? "")", html), ("--trace \(trace ?? "")", trace)]
        try OutputChecks.distinct(outputs)
        try OutputChecks.notInputs(outputs, inputs: [("the report \(report)", report)])
    }

    func run() throws {
        // The same reader (and schema check) as compare, merge and export.
        let decoded = try ReportFiles.readReport(report)
        if let html {
            try ReportFiles.write(Array(try HTMLReportRenderer().render(decoded).utf8), to: html)
            Terminal.write(2, "launchprof: HTML report written to \(html)\n")
        }
        if let trace {
            try ReportFiles.write(try TraceEventRenderer().renderBytes(decoded), to: trace)
            Terminal.write(2, "launchprof: trace written to \(trace)\n")
        }
    }
}
