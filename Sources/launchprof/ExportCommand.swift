import ArgumentParser
import LaunchprofCore
import LaunchprofReport

/// `launchprof export --openmetrics REPORT`: a report for Prometheus.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a launch report in another format (OpenMetrics) on stdout.",
        discussion: """
            --openmetrics: summary quantiles (0, 0.5, 0.9, 0.99, 1) of every metric and phase \
            duration in seconds, labelled program, build_id, host, mode; for a Prometheus \
            textfile collector or `curl --data-binary @- …/metrics/job/launchprof` to a Pushgateway.

            Exit status: 0 written; 64 usage error; 66 the report cannot be read or is of an \
            unknown schema version.
            """)

    @Flag(help: "OpenMetrics text format (the only format for now).")
    var openmetrics = false

    @Argument(help: "A LaunchReport JSON file.")
    var report: String

    func validate() throws {
        guard openmetrics else { throw ValidationError("Name the format: --openmetrics.") }
    }

    func run() throws {
        let value: LaunchReport
        do throws(LaunchReportError) {
            value = try ReportFiles.readReport(report)
        } catch {
            throw Terminal.fail(error.description, status: 66)
        }
        do throws(LaunchReportError) {
            Terminal.write(1, try OpenMetricsRenderer().render(value))
        } catch {
            throw Terminal.fail(error.description, status: 70)
        }
    }
}
