import Foundation
import LaunchprofCore
import LaunchprofELF
import Testing

/// The JSON report of fixtures, compared with checked-in goldens after redacting what varies
/// between machines: the fixture directory, build-ids, sizes, and every system library
/// (reduced to its file name). Set LAUNCHPROF_UPDATE_GOLDEN=1 to rewrite the goldens.
@Suite("Inspect: golden JSON")
struct InspectGoldenTests {
    static func redacted(_ json: Data) throws -> Data {
        let root = FixtureBuilder.outputRoot.appendingPathComponent("elf").path
        func isFixture(_ path: String) -> Bool { path.hasPrefix(root + "/") }
        func systemName(_ path: String) -> String { "<system>/" + (path.split(separator: "/").last.map(String.init) ?? "") }
        func redact(_ value: Any, key: String?) -> Any {
            switch value {
            case let text as String:
                if text.contains(root) { return text.replacingOccurrences(of: root, with: "<fixtures>") }
                if text.hasPrefix("/") { return systemName(text) }
                return text
            case let array as [Any]:
                return array.map { redact($0, key: key) }
            case let object as [String: Any]:
                var result: [String: Any] = [:]
                for (name, item) in object {
                    switch name {
                    case "buildID": result[name] = item is String ? "<build-id>" : item
                    case "sizeBytes": result[name] = "<size>"
                    default: result[name] = redact(item, key: name)
                    }
                }
                return result
            default:
                return value
            }
        }
        var report = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        // System libraries differ between machines: keep their names and place only.
        if let objects = report["objects"] as? [[String: Any]] {
            report["objects"] = objects.map { object -> Any in
                let path = object["path"] as? String ?? ""
                return isFixture(path) ? redact(object, key: nil) : ["path": systemName(object["loadedAs"] as? String ?? path)]
            }
        }
        report["totals"] = "<depends on system libraries>"
        // The coefficients are data another study replaces; the model has its own tests.
        report["costModel"] = "<cost model>"
        report["advice"] = (report["advice"] as? [[String: Any]])?.map { $0["kind"] ?? "" }
        report = try #require(redact(report, key: nil) as? [String: Any])
        return try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
    }

    static func compare(_ name: String, program: String, environment: [String: String] = [:]) throws {
        let session = InspectSession(configuration: .init(program: program, environment: environment))
        let report = try session.run()
        try SchemaValidator.expectValid(try report.jsonBytes(), against: .inspectReport, name)
        let actual = try redacted(Data(try report.jsonBytes()))
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Golden/\(name).json")
        if ProcessInfo.processInfo.environment["LAUNCHPROF_UPDATE_GOLDEN"] == "1" {
            try (actual + Data("\n".utf8)).write(to: golden)
        }
        let expected = try Data(contentsOf: Bundle.module.resourceURL!.appendingPathComponent("Golden/\(name).json"))
        #expect(
            String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self).trimmingCharacters(in: .newlines),
            "golden \(name).json differs (LAUNCHPROF_UPDATE_GOLDEN=1 rewrites it)")
    }

    @Test("RPATH chain")
    func rpathChain() throws {
        let program = try ELFFixtures.chain("rpath", programFlags: ["-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib"])
        try Self.compare("inspect-rpath", program: program)
    }

    @Test("RUNPATH chain with a missing library")
    func runpathMissing() throws {
        let program = try ELFFixtures.chain("runpath", programFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"])
        try Self.compare("inspect-runpath-missing", program: program)
    }
}
