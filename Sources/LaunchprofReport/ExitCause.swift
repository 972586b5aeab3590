/// Why launchprof exits, one cause one code, in every command (sysexits.h values above 63). The
/// root help prints `table`, and the README's table is checked against it.
///
/// It lives with the model, below every module that throws, so that each error type says its
/// own cause where it is defined (`LaunchprofError`): the CLI never decides a code from a message.
public enum ExitCause: Int32, CaseIterable, Sendable {
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
    case ioError = 74
    case noPermission = 77
    case interrupted = 130

    /// One line each (under 73 characters, so the help does not wrap it).
    public var meaning: String {
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
        case .ioError: "writing an output failed: a full disk, a full or closed stdout"
        case .noPermission: "permission denied reading the program (execute-only is not enough)"
        case .interrupted: "interrupted (Ctrl-C, SIGTERM): the child was killed"
        }
    }

    /// The table `launchprof help` prints and the README repeats.
    public static var table: String {
        allCases.map { status in
            let code = String(status.rawValue)
            return String(repeating: " ", count: 4 - code.count) + code + "  " + status.meaning
        }.joined(separator: "\n")
    }

    /// What `compare` and `bench` exit with for their verdict.
    public init(_ verdict: ComparisonVerdict) {
        switch verdict {
        case .unchanged: self = .success
        case .noVerdict: self = .noVerdict
        case .improvement: self = .improvement
        case .regression: self = .regression
        case .failed: self = .failed
        }
    }
}

/// An error of launchprof's own: its message names its subject, and it knows the exit it ends
/// the command with. Every module's error type conforms, deciding the cause from what it knows
/// where it is thrown (a read of an input is `noInput`, making an output `cannotCreate`); an
/// error wrapping another takes the wrapped one's cause unless its own context says otherwise.
public protocol LaunchprofError: Error, CustomStringConvertible {
    var exitCause: ExitCause { get }
}
