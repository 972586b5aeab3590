import LaunchprofReport

/// A bench suite file that does not parse, names no launch or asks for what cannot be made; each
/// case names its subject.
public enum BenchError: LaunchprofError, Equatable {
    /// The suite file is not valid: where in it, and what is wrong.
    case invalidSuite(path: String, location: String, reason: String)
    /// A mode the suite asks for that this launchprof cannot make.
    case unavailableMode(mode: String, reason: String)

    /// A usage error, like a bad option.
    public var exitCause: ExitCause { .usage }

    public var description: String {
        switch self {
        case .invalidSuite(let path, let location, let reason):
            "The suite '\(path)' is not valid" + (location.isEmpty ? "" : " at \(location)") + ": \(reason)."
        case .unavailableMode(let mode, let reason):
            "Mode '\(mode)' is not available: \(reason)."
        }
    }
}
