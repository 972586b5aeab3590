import LaunchprofReport

/// The report as JSON, byte for byte what `LaunchReportWriter` writes to a file.
public struct JSONReportRenderer: LaunchReportRenderer {
    public init() {}

    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        String(decoding: try LaunchReportWriter.encode(report), as: UTF8.self)
    }
}
