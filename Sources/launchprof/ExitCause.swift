import ArgumentParser
import LaunchprofCore
import LaunchprofELF
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Why launchprof exits, one cause one code, in every command (sysexits.h values above 63). The
/// root help prints `table`, and the README's table is checked against it.
enum ExitCause: Int32, CaseIterable {
    case success = 0
    case failed = 1
    case regression = 2
    case missingLibraries = 3
    case improvement = 4
    case noVerdict = 5
    case usage = 64
    case badInput = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case cannotCreate = 73
    case noPermission = 77
    case interrupted = 130

    /// One line each (under 73 characters, so the help does not wrap it).
    var meaning: String {
        switch self {
        case .success: "success (measured, written; compare: no change)"
        case .failed: "a run or launch failed (exit, signal, timeout), unless --ignore-failure"
        case .regression: "compare/bench: a regression, or a limit exceeded"
        case .missingLibraries: "inspect: inspected, but libraries are missing"
        case .improvement: "compare/bench: only improvements"
        case .noVerdict: "compare/bench: no verdict (too few runs for the interval asked)"
        case .usage: "usage error: unknown option, bad or out-of-range value, invalid suite"
        case .badInput: "bad input: not a launch report or ELF file; reports not comparable"
        case .noInput: "no input: no such file or program, a directory, a missing interpreter"
        case .unavailable: "cannot execute, trace or freeze the program; foreign ELF; no C compiler"
        case .software: "internal error"
        case .cannotCreate: "an output cannot be written (checked before any work)"
        case .noPermission: "inspect: permission denied reading the program"
        case .interrupted: "interrupted (Ctrl-C, SIGTERM): the child was killed, no report written"
        }
    }

    /// The table `launchprof help` prints and the README repeats.
    static var table: String {
        allCases.map { status in
            let code = String(status.rawValue)
            return String(repeating: " ", count: 3 - code.count) + code + "  " + status.meaning
        }.joined(separator: "\n")
    }

    /// Prints `launchprof: message` on stderr and returns the exit to throw.
    func fail(_ message: String) -> ExitCode {
        Terminal.fail(message, status: rawValue)
    }

    var code: ExitCode { ExitCode(rawValue) }

    // MARK: One cause, one code

    /// What `compare` and `bench` exit with for their verdict.
    static func of(_ verdict: ComparisonVerdict) -> ExitCause {
        switch verdict {
        case .unchanged: .success
        case .noVerdict: .noVerdict
        case .improvement: .improvement
        case .regression: .regression
        case .failed: .failed
        }
    }

    /// A suite file that does not parse or names no launch: a usage error, like a bad option.
    static func of(_ error: BenchError) -> ExitCause { .usage }

    /// An error reading a report, a suite or a bench folder.
    static func of(_ error: LaunchReportError) -> ExitCause {
        switch error {
        case .fileOperationFailed(let operation, _, _, _):
            // Reading is the only operation on inputs; every other one makes an output.
            return operation == "read" ? .noInput : .cannotCreate
        case .unsupportedSchemaVersion, .invalidReport, .cannotMerge, .cannotCompare, .wrongKind, .invalidReadiness,
            .missingSpawn:
            return .badInput
        case .encodingFailed, .writerClosed: return .software
        }
    }

    static func of(_ error: RunError) -> ExitCause {
        switch error {
        case .programNotFound, .interpreterMissing: .noInput
        // A path that is not there, or a directory, is no input, as inspect says.
        case .notExecutable(let path, _): access(path, F_OK) != 0 || ReportFiles.isDirectory(path) ? .noInput : .unavailable
        case .tracer, .observer, .display, .unwinderMissing: .unavailable
        case .cannotReadProgram(let error): of(error)
        case .report(let error): of(error) == .badInput ? .software : of(error)
        case .system: .software
        case .interrupted: .interrupted
        }
    }

    static func of(_ error: ELFError) -> ExitCause {
        switch error {
        case .notFound, .isDirectory: .noInput
        case .unreadable(_, let errno): errno == EACCES || errno == EPERM ? .noPermission : .noInput
        case .empty, .notELF, .truncated, .malformed: .badInput
        case .unsupportedClass, .unsupportedMachine: .unavailable
        }
    }

    static func of(_ error: InspectError) -> ExitCause {
        switch error {
        case .notFoundOnPath, .scriptInterpreterMissing: .noInput
        case .badScript: .badInput
        case .file(let error): of(error)
        }
    }

    static func of(_ error: CalibrationError) -> ExitCause {
        switch error {
        case .cannotWrite, .noCacheDirectory: .cannotCreate
        case .compilerMissing: .unavailable
        case .unreadable: .noInput
        case .buildFailed, .measurementFailed, .fitFailed, .fitDisagrees: .software
        }
    }

    /// "Exit status: 0 …; 64 …" for a command's help, from the table.
    static func summary(_ statuses: [ExitCause], _ notes: [ExitCause: String] = [:]) -> String {
        "Exit status: " + statuses.map { "\($0.rawValue) \(notes[$0] ?? $0.meaning)" }.joined(separator: "; ")
            + ". (All codes: `launchprof help`.)"
    }
}
