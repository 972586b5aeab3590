import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Errors of the sampler, each with its subject.
public enum SamplingError: LaunchprofError, Sendable {
    case system(operation: String, errno: Int32)
    case cannotOpenEvents(pid: Int32, errno: Int32)

    public var exitCause: ExitCause {
        switch self {
        case .system: .software
        case .cannotOpenEvents: .unavailable
        }
    }

    public var description: String {
        switch self {
        case .system(let operation, let code):
            "\(operation) failed: \(String(cString: strerror(code)))"
        case .cannotOpenEvents(let pid, let code):
            "cannot sample process \(pid): perf_event_open: \(String(cString: strerror(code)))"
                + (code == EACCES || code == EPERM
                    ? " (run as root, or lower /proc/sys/kernel/perf_event_paranoid to 1 or less)" : "")
        }
    }
}
