import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

/// `launchprof export --openmetrics|--prometheus REPORT`: a report for Prometheus.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a launch report for Prometheus (OpenMetrics or the classic text format) on stdout.",
        discussion: """
            Examples:
              launchprof export --prometheus app.json > launchprof.prom
              launchprof export --openmetrics app.json

            Summary quantiles (0, 0.5, 0.9, 0.99, 1) of every metric and phase duration in \
            seconds, labelled program, build_id, host, mode, and the runs by outcome. \
            --prometheus (text format 0.0.4) for a node_exporter textfile collector, \
            `curl --data-binary @- …/metrics/job/launchprof` to a Pushgateway, or `promtool check \
            metrics`; --openmetrics for an OpenMetrics reader.

            \(ExitCause.summary([.success, .usage, .badInput, .noInput, .ioError]))
            """)

    @Flag(help: "OpenMetrics 1.0 text format.")
    var openmetrics = false

    @Flag(help: "The classic Prometheus text format 0.0.4 (textfile collector, Pushgateway).")
    var prometheus = false

    @Argument(help: "A LaunchReport JSON file.")
    var report: String

    func validate() throws {
        guard openmetrics != prometheus else { throw ValidationError("Name one format: --openmetrics or --prometheus.") }
    }

    func run() throws {
        let value = try ReportFiles.readReport(report)
        Terminal.write(1, try MetricsRenderer(format: openmetrics ? .openMetrics : .prometheusText).render(value))
    }
}
