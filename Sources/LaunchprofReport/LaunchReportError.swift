/// Errors of the report layer; each case carries its subject.
public enum LaunchReportError: Error, Equatable, CustomStringConvertible {
    /// The event list of a run has no `spawned` event to measure from.
    case missingSpawn(eventCount: Int)
    /// `--ready` was given something launchprof does not understand.
    case invalidReadiness(String)
    /// The report could not be encoded (a value JSON cannot carry).
    case encodingFailed(reason: String)
    /// A file operation on the report failed: what, on which path, and the system's reason.
    case fileOperationFailed(operation: String, path: String, errno: Int32, reason: String)
    /// The writer was used after `finish()` or `cancel()`.
    case writerClosed(path: String)

    public var description: String {
        switch self {
        case .missingSpawn(let count):
            "The run's \(count) events have no 'spawned' event, so no time can be measured from the spawn."
        case .invalidReadiness(let argument):
            "Readiness '\(argument)' is not one of exit, hook, listen, stdout:REGEX, stderr:REGEX."
        case .encodingFailed(let reason):
            "The launch report could not be encoded as JSON: \(reason)."
        case .fileOperationFailed(let operation, let path, _, let reason):
            "Could not \(operation) '\(path)': \(reason)."
        case .writerClosed(let path):
            "The report '\(path)' was already finished or cancelled."
        }
    }
}
