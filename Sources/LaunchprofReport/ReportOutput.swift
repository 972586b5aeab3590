/// Where a `LaunchReportWriter` puts its bytes: all or nothing. `commit` makes everything written
/// visible at once; `discard` (or never committing) leaves nothing behind.
public protocol ReportOutput: AnyObject {
    /// Where the report ends up, for messages.
    var path: String { get }
    func write(_ bytes: [UInt8]) throws(LaunchReportError)
    func commit() throws(LaunchReportError)
    func discard()
}
