/// Where a `LaunchReportWriter` puts its bytes: all or nothing. `commit` makes everything written
/// visible at once; `discard` (or never committing) leaves nothing behind.
public protocol ReportOutput: AnyObject {
    /// Where the report ends up, for messages.
    var path: String { get }
    func write(_ bytes: [UInt8]) throws(LaunchReportError)
    func commit() throws(LaunchReportError)
    func discard()
}

/// Collects the report in memory, for tests and for rendering to stdout.
public final class InMemoryReportOutput: ReportOutput {
    public let path: String
    public private(set) var bytes: [UInt8] = []
    public private(set) var committed = false
    public private(set) var discarded = false

    public init(path: String = "<memory>") {
        self.path = path
    }

    public func write(_ bytes: [UInt8]) throws(LaunchReportError) {
        self.bytes += bytes
    }

    public func commit() throws(LaunchReportError) {
        committed = true
    }

    public func discard() {
        bytes = []
        discarded = true
    }
}
