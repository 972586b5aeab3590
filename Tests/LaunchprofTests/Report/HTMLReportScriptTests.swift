import Foundation
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// The page's script, `Sources/LaunchprofRenderers/HTMLReportScript.js`: valid JavaScript for a real
/// engine (node's parser), and the text the page carries is that file's.
@Suite("HTML report script")
struct HTMLReportScriptTests {
    static let scriptPath = FixtureBuilder.packageRoot
        .appendingPathComponent("Sources/LaunchprofRenderers/HTMLReportScript.js").path

    @Test("the script parses: node --check")
    func syntax() throws {
        // Debian's nodejs (Scripts/setup.sh); a machine without it fails here rather than skip.
        let candidates = ["/usr/bin/node"] + (ProcessInfo.processInfo.environment["PATH"] ?? "")
            .split(separator: ":").map { "\($0)/node" }
        let node = try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
            "node is not installed: run Scripts/setup.sh (Debian package nodejs) to syntax-check the page's script")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: node)
        process.arguments = ["--check", Self.scriptPath]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "node --check \(Self.scriptPath): \(message)")
    }

    @Test("the page embeds the file's text, byte for byte")
    func embedded() throws {
        let file = try String(contentsOfFile: Self.scriptPath, encoding: .utf8)
        #expect(file.hasSuffix("})();\n"))
        let html = try HTMLReportRenderer().render(ExportSamples.report([ExportSamples.run(index: 0, firstFrameMs: 14)]))
        #expect(html.contains("<script>\n" + file + "</script>\n"))
    }
}
