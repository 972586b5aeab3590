import Foundation

/// What stops the scaling study; each case names what it was doing.
enum ScalingError: Error, CustomStringConvertible {
    case commandFailed(command: String, status: Int32, output: String)
    case missingLaunchprof(hint: String)
    case badReport(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case usage(String)

    var description: String {
        switch self {
        case .commandFailed(let command, let status, let output):
            "\(command) failed (status \(status)): \(output.suffix(400))"
        case .missingLaunchprof(let hint): "launchprof not found: \(hint)"
        case .badReport(let path, let reason): "cannot read the report \(path): \(reason)"
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .usage(let text): text
        }
    }
}
