import Foundation

/// What a `run-*` fixture measured with its own CLOCK_MONOTONIC clock (see `run-fixture.h`):
/// lines `<kind> <name> <begin-ns> <end-ns>`, the truth launchprof's figures are compared with.
struct FixtureTruth {
    struct Entry: Equatable, CustomStringConvertible {
        var kind: String
        var name: String
        var beginNs: UInt64
        var endNs: UInt64

        var durationNs: UInt64 { endNs >= beginNs ? endNs - beginNs : 0 }
        var description: String { "\(kind) \(name) \(beginNs) \(endNs)" }
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: String
        var description: String { "Truth line '\(line)' is not '<kind> <name> <begin-ns> <end-ns>'." }
    }

    var entries: [Entry]

    init(text: String) throws {
        entries = try text.split(separator: "\n").map { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 4, let begin = UInt64(fields[2]), let end = UInt64(fields[3]) else {
                throw ParseError(line: String(line))
            }
            return Entry(kind: String(fields[0]), name: String(fields[1]), beginNs: begin, endNs: end)
        }
    }

    /// Reads a truth file; a missing file is an empty truth (the fixture measured nothing).
    init(contentsOf path: String) throws {
        let text =
            FileManager.default.fileExists(atPath: path)
            ? try String(contentsOfFile: path, encoding: .utf8) : ""
        try self.init(text: text)
    }

    func all(_ kind: String) -> [Entry] { entries.filter { $0.kind == kind } }

    func first(_ kind: String, _ name: String? = nil) -> Entry? {
        entries.first { $0.kind == kind && (name == nil || $0.name == name) }
    }

    /// A fresh path for `LP_FIXTURE_TRUTH` (the fixture creates the file).
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("lp-truth-\(getpid())-\(UUID().uuidString).txt").path
    }
}
