import Foundation
import LaunchprofCore
import LaunchprofELF
import LaunchprofReport
import Testing

/// Each error says its own exit cause where it is thrown: the same kind of failure on an input
/// and on an output ends differently, without the CLI reading the message.
@Suite("exit causes carried by the errors")
struct ExitCauseTests {
    @Test("reading an input that is not there: no input (66); making an output that cannot be: 73")
    func inputsAndOutputs() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/report.json"
        #expect {
            _ = try ReportFiles.read(missing)
        } throws: { error in
            (error as? any LaunchprofError)?.exitCause == .noInput && "\(error)".contains(missing)
        }
        #expect {
            try ReportFiles.write(Array("{}".utf8), to: missing)
        } throws: { error in
            (error as? any LaunchprofError)?.exitCause == .cannotCreate && "\(error)".contains(missing)
        }
    }

    @Test("a program that is not there or is a folder: no input (66); one that cannot be executed: 69")
    func programs() throws {
        let folder = FileManager.default.temporaryDirectory.path
        #expect {
            _ = try ProgramLocator.locate(folder, environment: [:])
        } throws: { error in (error as? RunError)?.exitCause == .noInput }
        #expect {
            _ = try ProgramLocator.locate(folder + "/nonexistent-\(UUID().uuidString)", environment: [:])
        } throws: { error in (error as? RunError)?.exitCause == .noInput }
        let script = folder + "/lp-noexec-\(UUID().uuidString)"
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: script))
        defer { try? FileManager.default.removeItem(atPath: script) }
        #expect {
            _ = try ProgramLocator.locate(script, environment: [:])
        } throws: { error in (error as? RunError)?.exitCause == .unavailable }
    }

    @Test("a wrapped error keeps the cause of what it wraps")
    func wrapped() {
        let unreadable = ELFError.unreadable(path: "/p", errno: EACCES)
        #expect(RunError.cannotReadProgram(unreadable).exitCause == .noPermission)
        #expect(InspectError.file(.notELF(path: "/p")).exitCause == .badInput)
        #expect(RunError.report(.fileOperationFailed(operation: "write to", path: "/p", errno: ENOSPC, reason: "full")).exitCause == .cannotCreate)
        #expect(RunError.interrupted(signal: SIGINT).exitCause == .interrupted)
    }
}

/// The exit cases issue 33 found disagreeing with the table, through the built launchprof.
@Suite("exit causes: the command line")
struct ExitCauseCommandTests {
    @Test("calibrate --check of a missing program: 66; a negative duration or timeout: 64 saying why")
    func missingProgramAndNegativeValues() throws {
        let missing = try LaunchprofCLI.run(["calibrate", "--check", "nosuchprog-\(UUID().uuidString.prefix(8))"])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("not found"), "\(missing.stderr)")
        let hold = try LaunchprofCLI.run(["prewarm", "--hold", "-1s", "/bin/true"])
        #expect(hold.status == 64)
        #expect(hold.stderr.contains("\"-1s\" is not a duration"), "\(hold.stderr)")
        let timeout = try LaunchprofCLI.run(["run", "--timeout", "-1", "/bin/true"])
        #expect(timeout.status == 64)
        #expect(timeout.stderr.contains("negative"), "\(timeout.stderr)")
    }

    /// Mode 711 runs for any user, but launchprof must read the program to time its loader.
    @Test("an execute-only program, as another user: 77, saying that reading it was refused")
    func executeOnlyProgram() throws {
        guard geteuid() == 0 else {
            Issue.record("needs root to run launchprof as another user (setpriv)")
            return
        }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let program = directory.appendingPathComponent("execute-only").path
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: program)
        try FileManager.default.setAttributes([.posixPermissions: 0o711], ofItemAtPath: program)
        let outcome = try LaunchprofCLI.run(
            executable: "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", try LaunchprofBinary.url().path, "run", "-r", "1", program])
        #expect(outcome.status == 77, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("Permission denied") && outcome.stderr.contains(program), "\(outcome.stderr)")
    }

    /// A FIFO output waits for its reader; SIGTERM during that wait is an interruption (130),
    /// not a failed output (73).
    @Test("SIGTERM while --json waits for a FIFO's reader: 130, nothing written")
    func interruptedWhileWaitingForAReader() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("report.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let process = Process()
        process.executableURL = try LaunchprofBinary.url()
        process.arguments = ["run", "-r", "1", "--json", fifo, "/bin/true"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let watchdog = process.killed(after: 120)
        defer { watchdog.cancel() }
        // No event says "blocked in open(2) of a FIFO": the kernel's wait channel does.
        let deadline = Date().addingTimeInterval(60)
        var waiting = false
        while !waiting, process.isRunning, Date() < deadline {
            let channel = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/wchan", encoding: .utf8)) ?? ""
            waiting = channel == "wait_for_partner"
            if !waiting { usleep(20_000) }
        }
        #expect(waiting, "launchprof never waited for the FIFO's reader")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("Interrupted while waiting to write"), "\(stderr)")
    }

    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lp-exit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
