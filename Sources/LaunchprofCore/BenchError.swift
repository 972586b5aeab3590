import LaunchprofReport

/// A bench suite file that does not parse, names no launch or asks for what cannot be made; each
/// case names its subject.
public enum BenchError: LaunchprofError {
    /// The suite file is not valid: where in it, and what is wrong.
    case invalidSuite(path: String, location: String, reason: String)
    /// A mode the suite asks for that this launchprof cannot make.
    case unavailableMode(mode: String, reason: String)
    /// A launch's program is not there: refused before any launch, as `run` refuses it.
    case missingProgram(launch: String, RunError)
    /// `--baseline` names a report, not a bench folder.
    case notABenchFolder(path: String)
    /// Thresholds on phases the launches do not have (one line each): a typo must not turn a
    /// limit off.
    case unknownPhases([String])

    /// A usage error, like a bad option; a missing program as `run` says it.
    public var exitCause: ExitCause {
        switch self {
        case .invalidSuite, .unavailableMode, .notABenchFolder, .unknownPhases: .usage
        case .missingProgram(_, let error): error.exitCause
        }
    }

    public var description: String {
        switch self {
        case .invalidSuite(let path, let location, let reason):
            "The suite '\(path)' is not valid" + (location.isEmpty ? "" : " at \(location)") + ": \(reason)."
        case .unavailableMode(let mode, let reason):
            "Mode '\(mode)' is not available: \(reason)."
        case .missingProgram(let launch, let error):
            "\(launch): \(error.description)"
        case .notABenchFolder(let path):
            "--baseline \(path): expected a bench folder (with suite.json)."
        case .unknownPhases(let problems):
            problems.joined(separator: "\nlaunchprof: ")
        }
    }
}
