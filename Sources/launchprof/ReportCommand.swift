import ArgumentParser
import LaunchprofCore
import LaunchprofReport

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
            The HTML file needs no network: open it in any browser. The trace opens in \
            ui.perfetto.dev or chrome://tracing.

            Exit status: 0 written; 64 usage error; 65 the file is not a LaunchReport; 66 no such \
            file; 73 an output cannot be written.
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
    }

    func run() throws {
        guard access(report, R_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            throw Terminal.fail("Could not read the report '\(report)': \(reason).", status: 66)
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: report))
        } catch {
            throw Terminal.fail("Could not read the report '\(report)': \(error).", status: 66)
        }
        let decoded: LaunchReport
        do {
            decoded = try JSONDecoder().decode(LaunchReport.self, from: data)
        } catch {
            throw Terminal.fail(
                "'\(report)' is not a LaunchReport (write one with `launchprof run --json FILE`): \(error)",
                status: 65)
        }
        do throws(LaunchReportError) {
            if let html {
                try ReportFiles.write(Array(try HTMLReportRenderer().render(decoded).utf8), to: html)
                Terminal.write(2, "launchprof: HTML report written to \(html)\n")
            }
            if let trace {
                try ReportFiles.write(try TraceEventRenderer().renderBytes(decoded), to: trace)
                Terminal.write(2, "launchprof: trace written to \(trace)\n")
            }
        } catch {
            throw Terminal.fail(error.description, status: 73)
        }
    }
}
