/// Errors of the report layer; each case carries its subject.
public enum LaunchReportError: LaunchprofError, Equatable {
    /// The event list of a run has no `spawned` event to measure from.
    case missingSpawn(eventCount: Int)
    /// `--ready` (or a suite's `ready`) was given something launchprof does not understand, or a
    /// pattern that does not compile (`reason`).
    case invalidReadiness(String, reason: String?)
    /// The report could not be encoded (a value JSON cannot carry).
    case encodingFailed(reason: String)
    /// An input (a report, a suite, a bench folder's file) could not be read.
    case cannotRead(path: String, errno: Int32, reason: String)
    /// Making an output failed: what, on which path, and the system's reason.
    case fileOperationFailed(operation: String, path: String, errno: Int32, reason: String)
    /// Writing an output failed midway (a full disk or stream, a closed stdout): `path` is the
    /// output as the user named it, `-` for standard output.
    case writeFailed(path: String, errno: Int32, reason: String)
    /// The writer was used after `finish()` or `cancel()`.
    case writerClosed(path: String)
    /// Waiting to write `path` (a FIFO no one reads yet) when launchprof was interrupted.
    case interrupted(path: String)
    /// A report of a schema version this launchprof does not know.
    case unsupportedSchemaVersion(path: String, found: Int, supported: Int)
    /// A file that is not a launch report (or is damaged).
    case invalidReport(path: String, reason: String)
    /// Reports that cannot be merged into one, and why.
    case cannotMerge(reason: String)
    /// Reports that cannot be compared, and why.
    case cannotCompare(reason: String)
    /// Another kind of document where a launch report was expected ("an inspect report").
    case wrongKind(path: String, kind: String)

    public var description: String {
        switch self {
        case .missingSpawn(let count):
            "The run's \(count) events have no 'spawned' event, so no time can be measured from the spawn."
        case .invalidReadiness(let argument, let reason?):
            "Readiness '\(argument)': \(reason)."
        case .invalidReadiness(let argument, nil):
            "Readiness '\(argument)' is not one of exit, hook, listen, frame, stdout:REGEX, stderr:REGEX."
        case .encodingFailed(let reason):
            "The launch report could not be encoded as JSON: \(reason)."
        case .cannotRead(let path, _, let reason):
            "Could not read '\(path)': \(reason)."
        case .fileOperationFailed(let operation, let path, _, let reason):
            "Could not \(operation) '\(path)': \(reason)."
        case .writeFailed(let path, _, let reason):
            "Could not write \(path == "-" ? "to standard output" : "'\(path)'"): \(reason); the output is incomplete."
        case .interrupted(let path):
            "Interrupted while waiting to write '\(path)' (a FIFO with no reader yet): nothing was written."
        case .writerClosed(let path):
            "The report '\(path)' was already finished or cancelled."
        case .unsupportedSchemaVersion(let path, let found, let supported):
            "'\(path)' is a launch report of schema version \(found); this launchprof reads version \(supported) only. Use a launchprof of the same version as the one that wrote it, or re-measure."
        case .invalidReport(let path, let reason):
            "'\(path)' is not a launchprof launch report: \(reason)."
        case .cannotMerge(let reason):
            "The reports cannot be merged: \(reason)."
        case .cannotCompare(let reason):
            "The reports cannot be compared: \(reason)."
        case .wrongKind(let path, let kind):
            "'\(path)' is \(kind), not a launch report (write one with `launchprof run --json FILE`)."
        }
    }

    public var exitCause: ExitCause {
        switch self {
        case .cannotRead: .noInput
        case .fileOperationFailed: .cannotCreate
        case .writeFailed: .ioError
        case .interrupted: .interrupted
        // A value given on the command line or in a suite.
        case .invalidReadiness: .usage
        case .unsupportedSchemaVersion, .invalidReport, .cannotMerge, .cannotCompare, .wrongKind: .badInput
        // launchprof's own events and documents.
        case .missingSpawn, .encodingFailed, .writerClosed: .software
        }
    }
}
