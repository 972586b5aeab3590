import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `run`'s exports besides the LaunchReport: MetricKit payloads and a Chrome trace.
struct ExportOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Write metrics.json (MXMetricPayload) and diagnostics.json (MXDiagnosticPayload) into this directory.",
        valueName: "dir"))
    var metrickit: String?

    @Option(help: ArgumentHelp(
        "With --metrickit: a launch whose time to first frame is at least this many ms gets a launch diagnostic.",
        valueName: "ms"))
    var launchDiagnosticThreshold: Double = Double(MetricKitPayloadBuilder.defaultLaunchDiagnosticThresholdNs) / 1e6

    @Option(help: ArgumentHelp(
        "Write a Chrome Trace Event JSON file (open it in ui.perfetto.dev or chrome://tracing).", valueName: "file"))
    var trace: String?

    func validate() throws {
        guard launchDiagnosticThreshold >= 0, launchDiagnosticThreshold.isFinite else {
            throw ValidationError("--launch-diagnostic-threshold must be a number of ms, 0 or more.")
        }
        if let trace {
            var info = stat()
            if stat(trace, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                throw ValidationError("--trace \(trace): is a directory; name a file.")
            }
        }
        if let metrickit {
            var info = stat()
            if stat(metrickit, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
                throw ValidationError("--metrickit \(metrickit): is not a directory.")
            }
        }
    }

    /// Whether the exports need every run kept in memory.
    var keepsRuns: Bool { metrickit != nil || trace != nil }

    /// Collects the runs as they finish (the report file streams them and keeps none).
    final class Collector: Sendable {
        let runs = Mutex<[LaunchRun]>([])
        let beganAtSeconds = Int64(time(nil))

        var onRun: @Sendable (LaunchRun) -> Void {
            { [self] run in runs.withLock { $0.append(run) } }
        }
    }

    func collector() -> Collector? { keepsRuns ? Collector() : nil }

    /// Writes the requested exports of `report` (whose runs are in `collector`); throws exit 73
    /// when one cannot be written.
    func write(_ report: LaunchReport, collector: Collector?) throws {
        guard let collector else { return }
        var full = report
        full.runs = collector.runs.withLock { $0 }
        do throws(LaunchReportError) {
            if let trace {
                try ReportFiles.write(try TraceEventRenderer().renderBytes(full), to: trace)
                Terminal.write(2, "launchprof: trace written to \(trace)\n")
            }
            if let metrickit {
                let context = MetricKitPayloadBuilder.Context(
                    distribution: PlatformFacts.distribution(), architecture: PlatformFacts.architecture(),
                    regionFormat: PlatformFacts.regionFormat(environment: ProcessInfo.processInfo.environment),
                    beganAtSeconds: collector.beganAtSeconds, endedAtSeconds: Int64(time(nil)))
                let builder = MetricKitPayloadBuilder(
                    context: context, launchDiagnosticThresholdNs: UInt64(launchDiagnosticThreshold * 1e6))
                let payloads = try builder.encodedPayloads(full)
                try ReportFiles.writeMetricKit(
                    metrics: payloads.metrics, diagnostics: payloads.diagnostics, directory: metrickit)
                Terminal.write(2, "launchprof: MetricKit payloads written to \(metrickit)\n")
            }
        } catch {
            throw Terminal.fail(error.description, status: 73)
        }
    }
}
