/// Drops the report's bytes: `launchprof run` without `--json` still streams runs through a
/// writer for the summary, but keeps nothing per run (memory stays flat however many runs).
public final class DiscardingReportOutput: ReportOutput {
    public let path = "<none>"
    public var keepsBytes: Bool { false }

    public init() {}

    public func write(_ bytes: [UInt8]) throws(LaunchReportError) {}
    public func commit() throws(LaunchReportError) {}
    public func discard() {}
}
