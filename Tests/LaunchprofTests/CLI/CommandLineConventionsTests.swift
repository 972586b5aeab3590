import Foundation
import LaunchprofReport
import Testing

/// What a new user reaches for: `--` to end the options, a misspelled option named as such,
/// `--version`, and guides whose option tables are the parser's.
@Suite("CLI: conventions")
struct CommandLineConventionsTests {
    @Test("`--` ends launchprof's options; the program's own options pass through untouched")
    func doubleDashEndsOptions() throws {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("lp-dd-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: report) }
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", report, "--", "/bin/sh", "-c", "exit 0", "-r"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        try SchemaValidator.expectValid(file: report, against: .launchReport)
        let decoded = try JSONDecoder().decode(LaunchReport.self, from: Data(contentsOf: URL(fileURLWithPath: report)))
        #expect(decoded.target.path == "/bin/sh")
        #expect(decoded.target.arguments == ["-c", "exit 0", "-r"])
        #expect(decoded.runs.count == 2)
        // Without `--`, as before: options after the program are the program's.
        let plain = try LaunchprofCLI.run(["run", "-r", "1", "--json", report, "/bin/sh", "-c", "exit 0", "--json"])
        #expect(plain.status == 0, "\(plain.stderr)")
        let again = try JSONDecoder().decode(LaunchReport.self, from: Data(contentsOf: URL(fileURLWithPath: report)))
        #expect(again.target.arguments == ["-c", "exit 0", "--json"])
    }

    @Test(
        "a word starting with - before the program is an unknown option: usage error, nearest option suggested",
        arguments: [
            (["run", "--jsno", "x", "/bin/true"], "Unknown option '--jsno'", "Did you mean '--json'?"),
            (["run", "-r", "12", "--metrikit", "DIR", "/bin/true"], "Unknown option '--metrikit'", nil),
            (["run", "--warmpu=3", "/bin/true"], "Unknown option '--warmpu'", "Did you mean '--warmup'?"),
            (["run", "--ignore-failures", "/bin/true"], "Unknown option '--ignore-failures'", "Did you mean '--ignore-failure'?"),
        ] as [([String], String, String?)])
    func unknownOptionIsAUsageError(arguments: [String], message: String, suggestion: String?) throws {
        let outcome = try LaunchprofCLI.run(arguments)
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        if let suggestion { #expect(outcome.stderr.contains(suggestion), "\(outcome.stderr)") }
        #expect(!outcome.stderr.contains("not found in PATH"))
    }

    @Test("--version prints the version and the schema version of every document launchprof writes")
    func version() throws {
        let outcome = try LaunchprofCLI.run(["--version"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.hasPrefix("launchprof \(LaunchprofVersion.current)\n"))
        #expect(outcome.stdout.contains("LaunchReport \(LaunchReport.currentSchemaVersion)"))
        #expect(outcome.stdout.contains("inspect \(InspectReport.currentSchemaVersion)"))
        for (document, version) in LaunchprofVersion.schemas {
            #expect(outcome.stdout.contains("\(document) \(version)"), "\(document)")
        }
    }

    @Test("help and version flags before the program are launchprof's", arguments: [["run", "--help"], ["run", "-r", "2", "-h"], ["run", "--version"]])
    func helpAndVersionBeforeTheProgram(arguments: [String]) throws {
        let outcome = try LaunchprofCLI.run(arguments)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let expected = arguments.last == "--version" ? "launchprof \(LaunchprofVersion.current)" : "USAGE: launchprof run"
        #expect(outcome.stdout.contains(expected), "\(outcome.stdout)")
    }

    @Test(
        "the guides' option tables list exactly the options of `launchprof help COMMAND`",
        arguments: [("run", "docs/measuring.md"), ("inspect", "docs/inspect-and-calibrate.md")])
    func guideOptionTablesMatchHelp(command: String, guide: String) throws {
        let help = try LaunchprofCLI.run(["help", command])
        #expect(help.status == 0)
        // Each option's line, in whichever section (OPTIONS, or an option group's own title),
        // is indented and starts with its spellings, then two spaces and its help text.
        let specs = help.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("  -") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .map { $0.components(separatedBy: "  ").first ?? "" }
        let fromHelp = Self.optionNames(specs.joined(separator: "\n")).subtracting(["-h", "--help"])
        let table = try Self.optionTable(of: command, in: LaunchprofCLI.document(guide))
        #expect(!fromHelp.isEmpty)
        #expect(Self.optionNames(table) == fromHelp, "\(guide)'s table vs `launchprof help \(command)`")
    }

    @Test(
        "every command's help shows examples, and each one parses",
        arguments: ["inspect", "run", "prewarm", "report", "bench", "compare", "merge", "export", "calibrate"])
    func helpExamplesParse(command: String) throws {
        let help = try LaunchprofCLI.run(["help", command])
        #expect(help.status == 0)
        let lines = help.stdout.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let start = try #require(lines.firstIndex(of: "Examples:"), "`launchprof help \(command)` shows no examples")
        let examples = lines[(start + 1)...].prefix { !$0.isEmpty }
        #expect(!examples.isEmpty)
        // Run where none of the examples' inputs exist: an example whose options parse ends at its
        // missing input (66) or succeeds (`inspect /usr/bin/gdb`); one that no longer parses is a
        // usage error (64).
        var template = Array(FileManager.default.temporaryDirectory.appendingPathComponent("lp-examples-XXXXXX").path.utf8CString)
        let folder = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for example in examples {
            var words = Self.shellWords(example)
            #expect(Array(words.prefix(2)) == ["launchprof", command], "\(example)")
            words.removeFirst()
            if command == "calibrate" {
                // Running it would calibrate this host: its options are checked against the help.
                for word in words where word.hasPrefix("-") {
                    #expect(help.stdout.contains(word + " ") || help.stdout.contains(word + ","), "\(example): \(word)")
                }
                continue
            }
            let outcome = try LaunchprofCLI.run(words, directory: folder)
            #expect([0, 66].contains(outcome.status), "\(example) exited \(outcome.status): \(outcome.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "an example left a file behind")
    }

    /// `line` split into words as a shell splits it: single quotes group, `> FILE` is dropped.
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quoted = false
        for character in line {
            if character == "'" {
                quoted.toggle()
            } else if character == " ", !quoted {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { words.append(word) }
        if let redirect = words.firstIndex(of: ">") { words.removeSubrange(redirect...) }
        return words
    }

    /// The first column of the table after "Options:" under the guide's `## \`launchprof COMMAND`
    /// heading (of any level).
    static func optionTable(of command: String, in guide: String) throws -> String {
        let lines = guide.components(separatedBy: "\n")
        let heading = try #require(lines.firstIndex { $0.hasPrefix("#") && $0.contains("# `launchprof \(command)") })
        let options = try #require(lines[heading...].firstIndex { $0 == "Options:" })
        var rows: [String] = []
        for line in lines[(options + 1)...] {
            if line.hasPrefix("#") { break }
            if line.hasPrefix("|") {
                let cells = line.replacingOccurrences(of: "\\|", with: "/").split(separator: "|")
                rows.append(cells.first.map(String.init) ?? "")
            } else if !rows.isEmpty {
                break
            }
        }
        return rows.dropFirst(2).joined(separator: "\n")
    }

    /// `-x` and `--long-name` spellings in `text`.
    static func optionNames(_ text: String) -> Set<String> {
        let words = text.split { !($0.isLetter || $0.isNumber || $0 == "-") }
        return Set(words.map(String.init).filter { word in
            if word.hasPrefix("--") { return word.count > 2 && word.dropFirst(2).first!.isLetter }
            return word.count == 2 && word.hasPrefix("-") && word.last!.isLetter
        })
    }
}
