import ArgumentParser
import LaunchprofCore
import LaunchprofAnalysis
import LaunchprofReport

/// `launchprof merge A B … -o OUT`: one report from many machines' reports of one program.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge launch reports of the same program (from many machines) into one.",
        discussion: """
            Examples:
              launchprof merge host-a.json host-b.json -o all.json

            Runs are pooled and re-indexed; the summary is computed again from every run, so \
            medians are those of all the runs. The reports must be of the same build (same \
            build-id; same path when a report has none), the same arguments, mode and readiness. \
            The merged report lists every host in `hosts`.

            Refused (exit 65): a report with no runs, the same runs twice (one report named twice, \
            or a copy), different builds, arguments or modes.

            \(ExitCause.summary([.success, .usage, .badInput, .noInput, .cannotCreate, .ioError], [.success: "merged"]))
            """)

    @Argument(help: "Launch reports (JSON) to merge.")
    var reports: [String] = []

    @Option(name: [.short, .customLong("output")], help: "The merged report's path (atomically; a link's target; '-', a pipe or a device in place).")
    var output: String

    func validate() throws {
        guard !reports.isEmpty else { throw ValidationError("Missing the reports to merge.") }
        try OutputChecks.file(output, option: "--output")
        try OutputChecks.notInputs([("--output \(output)", output)], inputs: reports.map { (what: "the report \($0)", path: $0) })
    }

    func run() throws {
        var named: [(path: String, report: LaunchReport)] = []
        for path in reports { named.append((path, try ReportFiles.readReport(path))) }
        let merged = try ReportMerger.merge(named)
        try ReportFiles.write(try LaunchReportWriter.encode(merged), to: output)
        let hosts = merged.hosts?.count ?? 1
        Terminal.write(2, "launchprof: \(merged.summary.runs) runs from \(reports.count) reports (\(hosts) host\(hosts == 1 ? "" : "s")) written to \(output)\n")
    }
}
