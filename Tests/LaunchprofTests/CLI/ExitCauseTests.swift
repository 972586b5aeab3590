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
