import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Outputs never destroy what launchprof reads, and an output that did not arrive is an error
/// (issue 33): an output naming the program or an input is refused (exit 64) with the file
/// unchanged; a full or closed stdout exits 74; a SIGKILLed run leaves no temporary file.
@Suite("outputs never destroy inputs; a failed output is an error", .serialized)
struct OutputSafetyTests {
    private static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/lp-outputs-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: made)
    }

    /// A copy of /bin/true of this test's own, and its bytes.
    private static func program(in directory: String) throws -> (path: String, bytes: Data) {
        let path = directory + "/prog"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/bin/true").resolvingSymlinksInPath().path, toPath: path)
        return (path, try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("run --json, --trace and --html naming the program are refused before any launch; the program is unchanged")
    func anOutputNamingTheProgramIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let program = try Self.program(in: directory)
        for option in ["--json", "--trace", "--html"] {
            let outcome = try LaunchprofCLI.run(["run", "-r", "1", option, program.path, program.path])
            #expect(outcome.status == 64, "\(option): \(outcome.stderr)")
            #expect(outcome.stderr.contains("\(option) \(program.path) would overwrite the program \(program.path)"), "\(outcome.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: program.path)) == program.bytes, "\(option) left the program as it was")
            #expect(!outcome.stdout.contains("median"), "nothing was launched")
        }
        // By another name: a symbolic link to the program, and the program found on PATH.
        let link = directory + "/link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: program.path)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = directory + ":" + (environment["PATH"] ?? "/usr/bin")
        let outcome = try LaunchprofCLI.run(["run", "-r", "1", "--json", link, "prog"], environment: environment)
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: program.path)) == program.bytes)
    }

    @Test("report and merge refuse an output that is their input; the report is unchanged")
    func anOutputNamingAnInputIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = directory + "/in.json"
        let made = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "ptrace", "--json", report, "/bin/true"])
        #expect(made.status == 0, "\(made.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: report))
        for arguments in [["report", report, "--html", report], ["report", report, "--trace", report], ["merge", report, "-o", report]] {
            let outcome = try LaunchprofCLI.run(arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains("would overwrite the report \(report)"), "\(outcome.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: report)) == before)
        }
    }

    /// Runs launchprof with its stdout on `path` (`/dev/full`) or closed (nil).
    private static func run(_ arguments: [String], stdout path: String?) throws -> LaunchprofCLI.Outcome {
        let binary = try LaunchprofBinary.url().path
        let quoted = ([binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try LaunchprofCLI.run(executable: "/bin/sh", ["-c", "exec " + quoted + (path.map { " >" + $0 } ?? " >&-")])
    }

    @Test("a full or closed stdout exits 74 naming standard output, for every command that writes to it")
    func aFullOrClosedStandardOutputExits74() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = directory + "/in.json"
        let made = try LaunchprofCLI.run(["run", "-r", "2", "--observer", "ptrace", "--json", report, "/bin/true"])
        #expect(made.status == 0, "\(made.stderr)")
        let commands: [[String]] = [
            ["run", "-r", "1", "--observer", "ptrace", "--output", "null", "/bin/true"],
            ["run", "-r", "1", "--observer", "ptrace", "--output", "null", "--json", "-", "/bin/true"],
            ["inspect", "/bin/true"],
            ["inspect", "--json", "/bin/true"],
            ["export", "--openmetrics", report],
        ]
        for arguments in commands {
            let full = try Self.run(arguments, stdout: "/dev/full")
            #expect(full.status == 74, "\(arguments) >/dev/full: \(full.stderr)")
            #expect(full.stderr.contains("standard output") && full.stderr.contains("No space left on device"), "\(full.stderr)")
            let closed = try Self.run(arguments, stdout: nil)
            #expect(closed.status == 74, "\(arguments) >&-: \(closed.stderr)")
            #expect(closed.stderr.contains("standard output"), "\(closed.stderr)")
        }
        // The same commands with a stdout that takes the bytes succeed: 74 is the output's alone.
        let fine = try Self.run(["inspect", "--json", "/bin/true"], stdout: "/dev/null")
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test("a SIGKILLed run streaming its report leaves no file behind")
    func aKilledRunLeavesNoTemporaryFile() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ready = directory + "/ready"
        #expect(mkfifo(ready, 0o600) == 0)
        let process = Process()
        process.executableURL = try LaunchprofBinary.url()
        // Each run's child says so on the FIFO; once the first has, the report is being streamed.
        process.arguments = ["run", "-r", "100000", "--observer", "ptrace", "--timeout", "60", "--json", directory + "/r.json",
                             "/bin/sh", "-c", "echo run > \(ready)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let watchdog = process.killed(after: 120)
        defer { watchdog.cancel() }
        let fd = open(ready, O_RDONLY | O_NONBLOCK)
        var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline, poll(&polled, 1, 100) == 0 {}
        var line = [UInt8](repeating: 0, count: 16)
        #expect(read(fd, &line, line.count) > 0, "a run's child started")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit(within: 30)
        close(fd)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != "ready" }
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
