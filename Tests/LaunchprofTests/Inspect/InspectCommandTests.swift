import Foundation
import Testing

/// `launchprof inspect` run as a real child process: bad inputs get one line on stderr naming
/// the file and the reason, and the documented exit status; never a crash.
@Suite("Inspect: command line")
struct InspectCommandTests {
    /// The `launchprof` executable built next to the test bundle.
    static func executable() throws -> String {
        let directory = Bundle.module.bundleURL.deletingLastPathComponent()
        let path = directory.appendingPathComponent("launchprof").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw InspectTruth.Failure(description: "launchprof is not built at \(path)")
        }
        return path
    }

    static func inspect(_ arguments: [String], environment: [String: String] = [:]) throws -> InspectTruth.Output {
        try InspectTruth.run(try executable(), ["inspect"] + arguments, environment: environment)
    }

    /// A scratch directory for hand-made bad inputs.
    static let scratch: String = {
        let path = FixtureBuilder.outputRoot.appendingPathComponent("elf/bad-inputs").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    static func write(_ name: String, _ bytes: [UInt8], executable: Bool = false) throws -> String {
        let path = scratch + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        if executable { chmod(path, 0o755) }
        return path
    }

    static func trueBytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: "/bin/true")))
    }

    enum BadInput: String, CaseIterable, Sendable {
        case notELF, empty, truncatedHeader, truncatedSegments, elf32, foreignMachine, directory, missingPath,
            notOnPath, scriptInterpreterMissing
    }

    static func make(_ input: BadInput) throws -> (argument: String, status: Int32, reason: String, environment: [String: String]) {
        switch input {
        case .notELF:
            return (try write("text.txt", Array("hello, not a program\n".utf8)), 65, "not an ELF file", [:])
        case .empty:
            return (try write("empty", []), 65, "empty file", [:])
        case .truncatedHeader:
            return (try write("short-header", Array(try trueBytes().prefix(40))), 65, "truncated", [:])
        case .truncatedSegments:
            return (try write("short-segments", Array(try trueBytes().prefix(4096))), 65, "truncated", [:])
        case .elf32:
            var bytes = try trueBytes()
            bytes[4] = 1  // EI_CLASS = ELFCLASS32
            return (try write("elf32", bytes), 69, "32-bit", [:])
        case .foreignMachine:
            var bytes = try trueBytes()
            bytes[18] = 183  // e_machine = EM_AARCH64
            bytes[19] = 0
            return (try write("aarch64", bytes), 69, "AArch64", [:])
        case .directory:
            return (scratch, 66, "is a directory", [:])
        case .missingPath:
            return (scratch + "/no-such-program", 66, "no such file", [:])
        case .notOnPath:
            return ("launchprof-no-such-command", 66, "not found in PATH", ["PATH": scratch])
        case .scriptInterpreterMissing:
            let script = try write("script.sh", Array("#!/no/such/interpreter -x\necho hi\n".utf8), executable: true)
            return (script, 66, "interpreter /no/such/interpreter not found", [:])
        }
    }

    @Test("bad input: one line naming the file and reason, documented status", arguments: BadInput.allCases)
    func badInput(_ input: BadInput) throws {
        let bad = try Self.make(input)
        for json in [false, true] {
            let output = try Self.inspect((json ? ["--json"] : []) + [bad.argument], environment: bad.environment)
            #expect(output.status == bad.status, "\(input): \(output.stderr)")
            #expect(output.stdout.isEmpty)
            let lines = output.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count == 1, "\(output.stderr)")
            #expect(output.stderr.hasPrefix("launchprof: "))
            #expect(output.stderr.contains(bad.argument), "\(output.stderr)")
            // The reason, not just the file name, must say what is wrong.
            let reason = output.stderr.replacingOccurrences(of: bad.argument, with: "<file>")
            #expect(reason.contains(bad.reason), "\(output.stderr)")
        }
    }

    @Test("an unresolvable library is reported, the rest inspected, exit status 3")
    func unresolvableLibrary() throws {
        let program = try ELFFixtures.chain("runpath", programFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"])
        let output = try Self.inspect(["--json", program])
        #expect(output.status == 3)
        try SchemaValidator.expectValid(output.stdout.utf8, against: .inspectReport, "inspect --json with a missing library")
        #expect(output.stderr == "launchprof: libelfleaf.so: not found (needed by \(ELFFixtures.root("runpath"))/lib/libelfdep.so)\n")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let missing = try #require(report["missing"] as? [[String: Any]])
        #expect(missing.count == 1)
        #expect(missing.first?["name"] as? String == "libelfleaf.so")
        let objects = try #require(report["objects"] as? [[String: Any]])
        #expect(objects.contains { ($0["path"] as? String)?.hasSuffix("libc.so.6") == true })
        // The text form reports the same and exits the same way.
        let text = try Self.inspect([program])
        #expect(text.status == 3)
        #expect(text.stdout.contains("libelfleaf.so: not found, needed by"))
    }

    @Test("forms the argument parser handles: usage errors exit 64, `--` and flag order work")
    func parserForms() throws {
        let viaParser = try Self.inspect(["--json", "--", "/bin/true"])
        let direct = try Self.inspect(["/bin/true", "--json"])
        #expect(viaParser.status == 0)
        #expect(direct.status == 0)
        #expect(viaParser.stdout == direct.stdout)
        try SchemaValidator.expectValid(direct.stdout.utf8, against: .inspectReport, "inspect --json /bin/true")
        #expect(!direct.stdout.isEmpty)
        #expect(try Self.inspect([]).status == 64)
        #expect(try Self.inspect(["--bogus", "/bin/true"]).status == 64)
        #expect(try Self.inspect(["/bin/true", "/bin/false"]).status == 64)
    }

    @Test("a name is found on PATH and symlinks are followed")
    func pathLookupAndSymlinks() throws {
        let link = Self.scratch + "/true-link"
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/bin/true")
        let output = try Self.inspect(["--json", "true-link"], environment: ["PATH": "/nonexistent:" + Self.scratch])
        #expect(output.status == 0, "\(output.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let program = try #require(report["program"] as? [String: Any])
        #expect(program["path"] as? String == InspectTruth.realPath("/bin/true"))
        #expect(program["type"] as? String == "pie")
    }

    @Test("a #! script is reported as a script and its interpreter inspected")
    func script() throws {
        let script = try Self.write("ok.sh", Array("#! /bin/sh  -e \necho hi\n".utf8), executable: true)
        let output = try Self.inspect(["--json", script])
        #expect(output.status == 0, "\(output.stderr)")
        try SchemaValidator.expectValid(output.stdout.utf8, against: .inspectReport, "inspect --json of a script")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let scriptInfo = try #require(report["script"] as? [String: Any])
        #expect(scriptInfo["interpreter"] as? String == "/bin/sh")
        #expect(scriptInfo["interpreterArgument"] as? String == "-e")
        let program = try #require(report["program"] as? [String: Any])
        #expect(program["path"] as? String == InspectTruth.realPath("/bin/sh"))
        let text = try Self.inspect([script])
        #expect(text.stdout.hasPrefix("script       \(script) (#!/bin/sh -e)"))
    }

    @Test("a static program: static, no interpreter, no loader work, exit 0")
    func staticProgram() throws {
        let path = try FixtureBuilder.build(["elf-static.c"], output: "elf/static/static", flags: ["-static"])
        let output = try Self.inspect(["--json", path])
        #expect(output.status == 0)
        try SchemaValidator.expectValid(output.stdout.utf8, against: .inspectReport, "inspect --json of a static program")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let program = try #require(report["program"] as? [String: Any])
        #expect(program["type"] as? String == "static")
        #expect(program["interpreter"] == nil)
        #expect(program["usesLoader"] as? Bool == false)
        #expect((report["objects"] as? [Any])?.count == 1)
        #expect((report["totals"] as? [String: Any])?["estimatedLoaderNs"] as? Int == 0)
        let text = try Self.inspect([path])
        #expect(text.stdout.contains("no dynamic loader runs"))
    }

    @Test("gdb: the JSON closure equals ldd's, with the contract's keys")
    func gdbJSON() throws {
        let output = try Self.inspect(["--json", "/usr/bin/gdb"])
        #expect(output.status == 0)
        try SchemaValidator.expectValid(output.stdout.utf8, against: .inspectReport, "inspect --json /usr/bin/gdb")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        #expect(report["schemaVersion"] as? Int == 2)
        let objects = try #require(report["objects"] as? [[String: Any]])
        let truth = try InspectTruth.ldd("/usr/bin/gdb")
        #expect(objects.dropFirst().compactMap { $0["path"] as? String } == truth.objects)
        for object in objects {
            for key in ["path", "buildID", "needed", "relocations", "initializers"] {
                #expect(object[key] != nil, "\(key)")
            }
            let relocations = try #require(object["relocations"] as? [String: Any])
            for key in ["relative", "symbolic", "jumpSlot", "tls", "copy", "irelative", "other"] {
                #expect(relocations[key] is Int, "\(key)")
            }
        }
        let program = try #require(report["program"] as? [String: Any])
        for key in ["path", "type", "interpreter", "buildID"] { #expect(program[key] != nil, "\(key)") }
        #expect(report["missing"] as? [Any] != nil)
        #expect(report["totals"] as? [String: Any] != nil)
        // Keys are sorted: the encoded top level lists them alphabetically.
        let keys = ["advice", "costModel", "initializerOrder", "missing", "objects", "program", "schemaVersion", "totals"]
        let positions = keys.compactMap { output.stdout.range(of: "\n  \"\($0)\"")?.lowerBound }
        #expect(positions.count == keys.count)
        #expect(positions == positions.sorted())
    }
}
