import LaunchprofReport

/// `compare --format json`: sorted keys, one document.
public struct ComparisonJSONRenderer: ComparisonRenderer {
    public init() {}

    public func render(_ comparison: SuiteComparison) throws(LaunchReportError) -> String {
        String(decoding: try LaunchReportWriter.encodeValue(comparison), as: UTF8.self) + "\n"
    }
}
