import Foundation
import Testing

@testable import LaunchprofReport

@Suite("compare: reading reports back")
struct LaunchReportDecoderTests {
    @Test func unknownSchemaVersionIsRefusedUnknownKeysAreNot() throws {
        var generator = SeededGenerator(seed: 9)
        let report = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator)
        let text = String(decoding: try LaunchReportWriter.encode(report), as: UTF8.self)
        #expect(try LaunchReportDecoder.decode(Array(text.utf8), path: "r.json") == report)
        // A later launchprof's optional field: read.
        let extended = text.replacingOccurrences(of: "\"schemaVersion\":1", with: "\"schemaVersion\":1,\"zNewField\":{\"x\":1}")
        #expect(extended != text)
        #expect(try LaunchReportDecoder.decode(Array(extended.utf8), path: "r.json") == report)
        // A version it does not know: refused, saying which.
        let future = text.replacingOccurrences(of: "\"schemaVersion\":1", with: "\"schemaVersion\":2")
        #expect(throws: LaunchReportError.unsupportedSchemaVersion(path: "r.json", found: 2, supported: 1)) {
            try LaunchReportDecoder.decode(Array(future.utf8), path: "r.json")
        }
        let message = LaunchReportError.unsupportedSchemaVersion(path: "r.json", found: 2, supported: 1).description
        #expect(message.contains("schema version 2") && message.contains("version 1 only"))
        #expect(throws: LaunchReportError.self) { try LaunchReportDecoder.decode(Array("[1]".utf8), path: "x") }
        #expect(throws: LaunchReportError.self) { try LaunchReportDecoder.decode(Array("{}".utf8), path: "x") }
    }
}
