import LaunchprofAnalysis
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// A measured run as the pipeline hands it to its sinks: the report's run, and what the session
/// learned about it that the report does not hold.
public struct MeasuredRun: Sendable {
    public var run: LaunchRun
    /// `--sample`: the run's folded stacks (`phase;outermost;…;innermost` → samples); empty
    /// without sampling.
    public var foldedStacks: [String: Int] = [:]

    public init(run: LaunchRun, foldedStacks: [String: Int] = [:]) {
        self.run = run
        self.foldedStacks = foldedStacks
    }
}

/// Where a pipeline's runs go: the report file (`StreamingReportSink`), the runs kept for the trace,
/// MetricKit and HTML (`RunCollector`), folded stacks (`FoldedStacksSink`), the terminal's
/// progress line. A command lists its sinks; adding an output of every run is one more sink.
///
/// `begin`, `finish` and `cancel` are called on the command's thread, `record` and `progress` on
/// the pipeline's tracer thread while the command's waits: a sink needs no lock of its own.
/// Only `record` is required.
public protocol LaunchRunSink: AnyObject {
    /// Before the first launch: what the runs are of. A sink that makes a file makes it here, so
    /// an output that cannot be made fails before any launch.
    func begin(target: LaunchReport.Target, host: LaunchReport.Host, mode: LaunchReport.Mode) throws(RunError)
    /// A measured run finished; runs arrive in order, indexed from 0 (warm-ups never arrive).
    func record(_ measured: MeasuredRun) throws(RunError)
    /// A launch finished (a warm-up or a measured one): `done` of `total` for this entry.
    func progress(done: Int, total: Int)
    /// Every run was recorded: the session's report, summary complete.
    func finish(_ report: StreamedLaunchReport) throws(RunError)
    /// The runs stopped before the end (a failed launch, an interruption, another sink's
    /// failure): leave nothing half-made behind.
    func cancel()
}

extension LaunchRunSink {
    public func begin(target: LaunchReport.Target, host: LaunchReport.Host, mode: LaunchReport.Mode) throws(RunError) {}
    public func progress(done: Int, total: Int) {}
    public func finish(_ report: StreamedLaunchReport) throws(RunError) {}
    public func cancel() {}
}

/// The report as it streams: each run encoded and written as it finishes, the summary at the
/// end, the file complete or absent (`LaunchReportWriter`).
public final class StreamingReportSink: LaunchRunSink {
    private let open: () throws(LaunchReportError) -> any ReportOutput
    private var writer: LaunchReportWriter?

    /// Into the file `path` names, as `--json` takes it (see `OutputDestination`).
    public init(path: String) {
        open = { () throws(LaunchReportError) in try OutputDestination(path).open() }
    }

    /// Into `output` (tests: `InMemoryReportOutput`).
    public init(output: any ReportOutput) {
        open = { output }
    }

    public func begin(target: LaunchReport.Target, host: LaunchReport.Host, mode: LaunchReport.Mode) throws(RunError) {
        writer = try RunError.reporting { () throws(LaunchReportError) in
            try LaunchReportWriter(output: try open(), target: target, host: host, mode: mode)
        }
    }

    public func record(_ measured: MeasuredRun) throws(RunError) {
        try RunError.reporting { () throws(LaunchReportError) in try writer?.append(measured.run) }
    }

    public func finish(_ report: StreamedLaunchReport) throws(RunError) {
        try RunError.reporting { () throws(LaunchReportError) in try writer?.finish(summary: report.summary) }
        writer = nil
    }

    public func cancel() {
        writer?.cancel()
        writer = nil
    }
}

/// Keeps every measured run, for what needs them all at the end: the trace, the MetricKit
/// payloads, the HTML page, a bench's comparison.
public final class RunCollector: LaunchRunSink {
    public private(set) var runs: [LaunchRun] = []
    /// The whole report, once the pipeline finished.
    public private(set) var report: LaunchReport?
    /// When the first launch began (MetricKit's payload window), seconds since the epoch.
    public private(set) var beganAtSeconds: Int64 = 0

    public init() {}

    public func begin(target: LaunchReport.Target, host: LaunchReport.Host, mode: LaunchReport.Mode) throws(RunError) {
        beganAtSeconds = Int64(time(nil))
    }

    public func record(_ measured: MeasuredRun) throws(RunError) {
        runs.append(measured.run)
    }

    public func finish(_ report: StreamedLaunchReport) throws(RunError) {
        self.report = report.withRuns(runs)
    }
}

/// `--folded`: the folded stacks of every measured run, summed.
public final class FoldedStacksSink: LaunchRunSink {
    public private(set) var stacks = FoldedStacks()

    public init() {}

    public func record(_ measured: MeasuredRun) throws(RunError) {
        stacks.add(measured.foldedStacks)
    }
}
