import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

/// `launchprof export --openmetrics REPORT`: a report for Prometheus.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a launch report in another format (OpenMetrics) on stdout.",
        discussion: """
            Examples:
              launchprof export --openmetrics app.json > launchprof.prom

            --openmetrics: summary quantiles (0, 0.5, 0.9, 0.99, 1) of every metric and phase \
            duration in seconds, labelled program, build_id, host, mode; for a Prometheus \
            textfile collector or `curl --data-binary @- …/metrics/job/launchprof` to a Pushgateway.

            \(ExitCause.summary([.success, .usage, .badInput, .noInput]))
            """)

    @Flag(help: "OpenMetrics text format (the only format for now).")
    var openmetrics = false

    @Argument(help: "A LaunchReport JSON file.")
    var report: String

    func validate() throws {
        guard openmetrics else { throw ValidationError("Name the format: --openmetrics.") }
    }

    func run() throws {
        let value = try ReportFiles.readReport(report)
        Terminal.write(1, try OpenMetricsRenderer().render(value))
    }
}
