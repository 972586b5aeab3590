import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers
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
    @OptionGroup var metricKit: MetricKitOptions

    @Option(help: ArgumentHelp(
        "Write a Chrome Trace Event JSON file (open it in ui.perfetto.dev or chrome://tracing).", valueName: "file"))
    var trace: String?

    func validate() throws {
        try OutputChecks.file(trace, option: "--trace")
    }

    /// Whether the exports need every run kept in memory.
    var keepsRuns: Bool { metricKit.metrickit != nil || trace != nil }

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
        if let trace {
            try ReportFiles.write(try TraceEventRenderer().renderBytes(full), to: trace)
            Terminal.write(2, "launchprof: trace written to \(trace)\n")
        }
        if let directory = metricKit.metrickit {
            try metricKit.write(
                full, into: directory, beganAtSeconds: collector.beganAtSeconds, endedAtSeconds: Int64(time(nil)))
            Terminal.write(2, "launchprof: MetricKit payloads written to \(directory)\n")
        }
    }
}
