import LaunchprofReport

/// Turns a report into text for a terminal or a file. Renderers are pure: the caller decides
/// where the text goes (and, for colour, whether the destination is a terminal and NO_COLOR).
public protocol LaunchReportRenderer {
    func render(_ report: LaunchReport) throws(LaunchReportError) -> String
}
