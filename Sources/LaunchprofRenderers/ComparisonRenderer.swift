import LaunchprofReport

/// Turns a comparison into text for a terminal, a pull request or a program.
public protocol ComparisonRenderer {
    func render(_ comparison: SuiteComparison) throws(LaunchReportError) -> String
}
