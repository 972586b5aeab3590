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
