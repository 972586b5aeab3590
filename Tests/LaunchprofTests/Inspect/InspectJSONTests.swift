import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// The report's hand-written JSON against Foundation's `JSONEncoder` encoding of the same
/// values: same members and values, same (sorted) key order.
@Suite("Inspect: JSON text")
struct InspectJSONTests {
    /// Every `"key" :` in the order the text lists them.
    static func keySequence(_ text: String) throws -> [String] {
        let pattern = try NSRegularExpression(pattern: #""([A-Za-z]+)" :"#)
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    static func expectMatchesFoundation(_ report: InspectReport) throws {
        let ours = try report.jsonBytes()
        try SchemaValidator.expectValid(ours, against: .inspectReport, report.program.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let theirs = try encoder.encode(report)
        let parsedOurs = try JSONSerialization.jsonObject(with: Data(ours)) as? NSDictionary
        let parsedTheirs = try JSONSerialization.jsonObject(with: theirs) as? NSDictionary
        #expect(parsedOurs != nil)
        #expect(parsedOurs == parsedTheirs)
        let oursText = String(decoding: ours, as: UTF8.self)
        #expect(try keySequence(oursText) == keySequence(String(decoding: theirs, as: UTF8.self)))
        #expect(oursText.hasSuffix("}\n"))
        // And the document decodes back into the same value.
        #expect(try JSONDecoder().decode(InspectReport.self, from: Data(ours)) == report)
    }

    @Test("gdb's report, every object and piece of advice")
    func gdb() throws {
        let report = try InspectSession(configuration: .init(program: "/usr/bin/gdb", environment: [:])).run()
        #expect(!report.advice.isEmpty)
        try Self.expectMatchesFoundation(report)
    }

    /// The text is written into memory sized from the report's counts; a report with longer
    /// strings than that allows is written again into more, not cut.
    @Test("a report larger than its first buffer: the same text, whole")
    func largerThanItsBuffer() throws {
        var report = try InspectSession(configuration: .init(program: "/bin/true", environment: [:])).run()
        let path = "/" + String(repeating: "long-directory-name/", count: 20_000) + "true"
        report.program.path = path
        report.objects[0].path = path
        let text = String(decoding: try report.jsonBytes(), as: UTF8.self)
        #expect(text.utf8.count > 2 * path.utf8.count)
        #expect(text.components(separatedBy: path).count == 3)
        try Self.expectMatchesFoundation(report)
    }

    @Test("a script with a missing library, optional members present and absent")
    func scriptAndMissing() throws {
        let program = try ELFFixtures.chain("runpath", programFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"])
        let script = try InspectCommandTests.write(
            "runpath-script", Array("#!\(program) \"quoted\\arg\"\t\n".utf8), executable: true)
        let report = try InspectSession(configuration: .init(program: script, environment: [:])).run()
        #expect(report.script?.interpreterArgument == "\"quoted\\arg\"")
        #expect(!report.missing.isEmpty)
        try Self.expectMatchesFoundation(report)
    }

    /// Both hand-written JSON writers share one string escaping, Foundation's: a backspace is
    /// `\b`, a form feed `\f`, other controls `\u00XX`, byte for byte what `JSONEncoder` writes.
    @Test("control characters in a script's argument are escaped as JSONEncoder escapes them")
    func controlCharacters() throws {
        let program = try ELFFixtures.chain("runpath", programFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"])
        let argument = "a\u{8}b\u{C}c\u{1}d\u{1F}e"
        let script = try InspectCommandTests.write(
            "control-script", Array("#!\(program) \(argument)\n".utf8), executable: true)
        let report = try InspectSession(configuration: .init(program: script, environment: [:])).run()
        #expect(report.script?.interpreterArgument == argument)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let escaped = String(decoding: try encoder.encode([argument]), as: UTF8.self).dropFirst().dropLast()
        #expect(escaped.contains("\\b") && escaped.contains("\\f"), "\(escaped)")
        #expect(String(decoding: try report.jsonBytes(), as: UTF8.self).contains(": " + escaped), "\(escaped)")
        try Self.expectMatchesFoundation(report)
    }
}
