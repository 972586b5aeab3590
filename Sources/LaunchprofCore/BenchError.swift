import LaunchprofReport

/// Errors of `launchprof bench` before or around its launches; each names its subject.
public enum BenchError: Error, Equatable, CustomStringConvertible {
    /// The suite file is not valid: where in it, and what is wrong.
    case invalidSuite(path: String, location: String, reason: String)
    /// A mode the suite asks for that this launchprof cannot make.
    case unavailableMode(mode: String, reason: String)
    /// A file or folder could not be read or written.
    case file(LaunchReportError)
    /// A `compare` argument is neither a report nor a bench folder, or the two sides differ.
    case badComparison(reason: String)

    public var description: String {
        switch self {
        case .invalidSuite(let path, let location, let reason):
            "The suite '\(path)' is not valid" + (location.isEmpty ? "" : " at \(location)") + ": \(reason)."
        case .unavailableMode(let mode, let reason):
            "Mode '\(mode)' is not available: \(reason)."
        case .file(let error):
            error.description
        case .badComparison(let reason):
            reason
        }
    }
}
