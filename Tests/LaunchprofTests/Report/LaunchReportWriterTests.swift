import Foundation
import LaunchprofReport
import Testing

@Suite("LaunchReportWriter")
struct LaunchReportWriterTests {
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("lp-writer-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func leftovers(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
    }

    @Test("the streamed file is the whole report's encoding, and decodes back to it")
    func streamedEqualsEncoded() throws {
        let report = try ReportSamples.report()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("report.json").path
        let writer = try LaunchReportWriter(
            path: path, target: report.target, host: report.host, mode: report.mode)
        for run in report.runs { try writer.append(run) }
        try writer.finish(summary: report.summary)

        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Array(written) == (try LaunchReportWriter.encode(report)))
        try SchemaValidator.expectValid(written, against: .launchReport, "streamed report")
        let decoded = try JSONDecoder().decode(LaunchReport.self, from: written)
        #expect(decoded == report)
        #expect(try leftovers(in: directory).isEmpty)
    }

    @Test("top-level keys come out sorted, with the runs before the summary")
    func sortedKeys() throws {
        let text = String(decoding: try LaunchReportWriter.encode(try ReportSamples.report()), as: UTF8.self)
        let keys = ["host", "mode", "runs", "schemaVersion", "summary", "target"]
        let positions = try keys.map { key in
            try #require(text.range(of: "\"\(key)\":")?.lowerBound, "\(key) missing")
        }
        #expect(positions == positions.sorted())
        // Every object's keys are sorted: JSONSerialization sees the same document.
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(object.map { Set($0.keys) } == Set(keys))
    }

    @Test("an empty report is valid JSON with no runs")
    func emptyReport() throws {
        let output = InMemoryReportOutput()
        let writer = try LaunchReportWriter(
            output: output, target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode)
        try writer.finish(summary: LaunchSummary())
        #expect(output.committed)
        let decoded = try JSONDecoder().decode(LaunchReport.self, from: Data(output.bytes))
        #expect(decoded.runs.isEmpty)
        #expect(decoded.summary.runs == 0)
        #expect(decoded.schemaVersion == LaunchReport.currentSchemaVersion)
    }

    @Test("until finish, the destination is absent (or still the old report); then it is complete")
    func atomicReplacement() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("report.json").path
        let old = Data("previous report\n".utf8)
        try old.write(to: URL(fileURLWithPath: path))

        let report = try ReportSamples.report()
        let writer = try LaunchReportWriter(
            path: path, target: report.target, host: report.host, mode: report.mode)
        // The report is written to an unnamed file (O_TMPFILE) until `finish`: nothing a
        // SIGKILL could leave behind has a name in the directory.
        #expect(try leftovers(in: directory).isEmpty)
        for run in report.runs {
            try writer.append(run)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old)
        }
        try writer.finish(summary: report.summary)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) != old)
        #expect(try leftovers(in: directory).isEmpty)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o644)
    }

    @Test("cancel, or dropping an unfinished writer, leaves nothing behind")
    func cancelRemovesTemporary() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("report.json").path
        let run = try ReportSamples.run(0)

        let writer = try LaunchReportWriter(
            path: path, target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode)
        try writer.append(run)
        writer.cancel()
        writer.cancel()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try leftovers(in: directory).isEmpty)
        #expect(throws: LaunchReportError.writerClosed(path: path)) { try writer.append(run) }
        #expect(throws: LaunchReportError.writerClosed(path: path)) { try writer.finish(summary: LaunchSummary()) }

        do {
            let dropped = try LaunchReportWriter(
                path: path, target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode)
            try dropped.append(run)
            #expect(try leftovers(in: directory).isEmpty)
        }
        #expect(try leftovers(in: directory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a destination in a missing directory is a one-line error naming the path")
    func missingDirectory() throws {
        let path = "/nonexistent-\(UUID().uuidString)/report.json"
        do {
            _ = try LaunchReportWriter(
                path: path, target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode)
            Issue.record("expected an error")
        } catch {
            guard case .fileOperationFailed(_, let failedPath, let code, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failedPath == path)
            #expect(code == ENOENT)
            #expect(error.description.contains(path))
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("a destination that is a directory is refused before any run")
    func directoryDestination() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: LaunchReportError.fileOperationFailed(
            operation: "write to", path: directory.path, errno: EISDIR,
            reason: "it is a directory; name a file in it")) {
            try LaunchReportWriter(
                path: directory.path, target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode)
        }
        #expect(try leftovers(in: directory.deletingLastPathComponent()).filter { $0.hasPrefix(directory.lastPathComponent) }.isEmpty)
    }

    @Test("a failing output is cancelled, not left half-written")
    func failingOutput() throws {
        final class FailingOutput: ReportOutput {
            let path = "/failing"
            var writes = 0
            var discarded = false
            func write(_ bytes: [UInt8]) throws(LaunchReportError) {
                writes += 1
                if writes > 2 { throw .fileOperationFailed(operation: "write", path: path, errno: 28, reason: "No space left on device") }
            }
            func commit() throws(LaunchReportError) {}
            func discard() { discarded = true }
        }
        let output = FailingOutput()
        let writer = try LaunchReportWriter(
            output: output, target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode)
        try writer.append(try ReportSamples.run(0))
        #expect(throws: LaunchReportError.self) { try writer.append(try ReportSamples.run(1)) }
        writer.cancel()
        #expect(output.discarded)
    }
}
