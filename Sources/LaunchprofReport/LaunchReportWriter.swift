#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Streams a `LaunchReport` to disk as runs finish, so memory stays flat however many runs are
/// made: each run is encoded (by `JSONEncoder`, as every part of the document) and written when
/// it is appended; the summary, which the caller builds as the runs go (`LaunchSummaryBuilder`),
/// closes the document. The file is complete or absent: it is written to a temporary file beside
/// the destination and renamed over it by `finish`; `cancel()` (or dropping the writer
/// unfinished) removes the temporary file.
///
/// The document is the same bytes `LaunchReportWriter.encode(_:)` gives for the whole report:
/// sorted keys, compact, one run per line.
public final class LaunchReportWriter {
    private let output: any ReportOutput
    private var report: LaunchReport
    private var runCount = 0
    private var closed = false

    /// Starts a report on any output (`AtomicReportFile` in Core, `InMemoryReportOutput`).
    public init(
        output: any ReportOutput, target: LaunchReport.Target, host: LaunchReport.Host,
        mode: LaunchReport.Mode
    ) throws(LaunchReportError) {
        self.output = output
        report = LaunchReport(
            target: target, host: host, mode: mode, runs: [], summary: LaunchSummary())
        do {
            try output.write(Self.split(try Self.encodeValue(report)).head)
        } catch {
            output.discard()
            throw error
        }
    }

    deinit {
        if !closed { output.discard() }
    }

    /// The destination path.
    public var path: String { output.path }

    /// Writes one run.
    public func append(_ run: LaunchRun) throws(LaunchReportError) {
        guard !closed else { throw .writerClosed(path: output.path) }
        try output.write(Array((runCount == 0 ? "\n" : ",\n").utf8) + Self.encodeValue(run))
        runCount += 1
    }

    /// Writes `summary` (of the runs appended) and the rest of the document, makes it durable
    /// and moves it into place.
    public func finish(summary: LaunchSummary) throws(LaunchReportError) {
        guard !closed else { throw .writerClosed(path: output.path) }
        closed = true
        report.summary = summary
        do {
            let tail = Self.split(try Self.encodeValue(report)).tail
            try output.write(Array((runCount == 0 ? "" : "\n").utf8) + tail)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// Abandons the report: nothing is left at the destination. Safe to call more than once.
    public func cancel() {
        guard !closed else { return }
        closed = true
        output.discard()
    }

    /// The whole report as the writer would write it.
    public static func encode(_ report: LaunchReport) throws(LaunchReportError) -> [UInt8] {
        var shell = report
        shell.runs = []
        let parts = split(try encodeValue(shell))
        var bytes = parts.head
        for (offset, run) in report.runs.enumerated() {
            bytes += Array((offset == 0 ? "\n" : ",\n").utf8)
            bytes += try encodeValue(run)
        }
        if !report.runs.isEmpty { bytes.append(UInt8(ascii: "\n")) }
        return bytes + parts.tail
    }

    /// Encodes one value as compact JSON with sorted keys.
    public static func encodeValue(_ value: some Encodable) throws(LaunchReportError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw .encodingFailed(reason: String(describing: error))
        }
    }

    private static let runsMarker = Array(#""runs":[]"#.utf8)

    /// Splits a report encoded with no runs around its empty runs array: the head ends with
    /// `"runs":[`, the tail starts with `]`. Strings are escaped in JSON, so the first unescaped
    /// `"runs":[]` is the top-level key (host and mode, the only keys before it, have no `runs`
    /// array).
    static func split(_ bytes: [UInt8]) -> (head: [UInt8], tail: [UInt8]) {
        let marker = runsMarker
        var index = 0
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0], Array(bytes[index..<(index + marker.count)]) == marker {
                let cut = index + marker.count - 1
                return (Array(bytes[..<cut]), Array(bytes[cut...]) + [UInt8(ascii: "\n")])
            }
            index += 1
        }
        // Unreachable for a LaunchReport; keep the document valid if the model ever changes.
        return (bytes, [UInt8(ascii: "\n")])
    }
}
