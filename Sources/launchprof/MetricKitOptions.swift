import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

#if canImport(Glibc)
import Glibc
#endif

/// `--metrickit DIR`: MetricKit's payloads of a report, on every command that makes launches.
struct MetricKitOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Write metrics.json (MXMetricPayload) and diagnostics.json (MXDiagnosticPayload) into this directory.",
        valueName: "dir"))
    var metrickit: String?

    @Option(help: ArgumentHelp(
        "With --metrickit: a launch whose time to first frame is at least this many ms gets a launch diagnostic.",
        valueName: "ms"), transform: { try OptionValue.milliseconds($0, positive: false) })
    var launchDiagnosticThreshold: Double = Double(MetricKitPayloadBuilder.defaultLaunchDiagnosticThresholdNs) / 1e6

    func validate() throws {
        // The folder is made, not its parents: a mistyped parent is an error.
        try OutputChecks.folder(metrickit, option: "--metrickit")
    }

    /// `bench`: each launch's payloads into `DIR/<launch>/`.
    func write(_ outcomes: [BenchRunner.Outcome]) throws {
        guard let directory = metrickit else { return }
        try ReportFiles.makeDirectory(directory)
        for outcome in outcomes {
            guard let report = outcome.report else { continue }
            try write(
                report, into: directory + "/" + outcome.entry.name, beganAtSeconds: outcome.beganAtSeconds,
                endedAtSeconds: Int64(time(nil)))
        }
        Terminal.write(2, "launchprof: MetricKit payloads written to \(directory)/<launch>/\n")
    }

    /// Writes the payloads of `report` (its runs included) into `directory`, a launch session
    /// that began and ended at the given times (s since the epoch).
    func write(
        _ report: LaunchReport, into directory: String, beganAtSeconds: Int64, endedAtSeconds: Int64
    ) throws(LaunchReportError) {
        let context = MetricKitPayloadBuilder.Context(
            distribution: PlatformFacts.distribution(), architecture: PlatformFacts.architecture(),
            regionFormat: PlatformFacts.regionFormat(environment: ProcessEnvironment.current()),
            beganAtSeconds: beganAtSeconds, endedAtSeconds: endedAtSeconds)
        let builder = MetricKitPayloadBuilder(
            context: context, launchDiagnosticThresholdNs: UInt64(launchDiagnosticThreshold * 1e6))
        let payloads = try builder.encodedPayloads(report)
        try ReportFiles.writeMetricKit(metrics: payloads.metrics, diagnostics: payloads.diagnostics, directory: directory)
    }
}
