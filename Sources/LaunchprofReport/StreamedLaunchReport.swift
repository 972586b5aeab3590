/// A session's report once its runs have been streamed to where they go (the report file, the
/// exports): what was launched, where, how, the summary, and the last measured run, never the
/// runs themselves. `LaunchReport` is the document that holds its runs; a renderer given this
/// one knows it has medians and one run, not every run.
public struct StreamedLaunchReport: Sendable, Equatable {
    public var target: LaunchReport.Target
    public var host: LaunchReport.Host
    public var mode: LaunchReport.Mode
    public var summary: LaunchSummary
    /// The last measured run (what it left unmeasured and its warnings stand for the session's);
    /// nil when no run was measured.
    public var lastRun: LaunchRun?

    public init(
        target: LaunchReport.Target, host: LaunchReport.Host, mode: LaunchReport.Mode, summary: LaunchSummary,
        lastRun: LaunchRun?
    ) {
        self.target = target
        self.host = host
        self.mode = mode
        self.summary = summary
        self.lastRun = lastRun
    }

    /// The document with `runs` (which the caller kept, e.g. for the trace and MetricKit).
    public func withRuns(_ runs: [LaunchRun]) -> LaunchReport {
        LaunchReport(target: target, host: host, mode: mode, runs: runs, summary: summary)
    }
}
