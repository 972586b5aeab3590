import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Why `launchprof monitor` (or `monitor report`) cannot go on, with the subject named.
public enum MonitorError: LaunchprofError, Equatable {
    /// The kernel's tracing file system is not there or not writable (not root).
    case noTracefs
    /// A kernel event could not be defined or opened (`what`: the event, `errno`: why).
    case kernelEvent(what: String, errno: Int32)
    /// The store directory cannot be used (`reason`: not private, not a directory, …).
    case storeUnusable(path: String, reason: String)
    /// Another monitor records into the store (the process holding its lock).
    case storeBusy(path: String, holder: String)
    /// SQLite refused an operation on the store.
    case database(path: String, operation: String, message: String)
    /// The store holds no launch database (report on a directory never recorded into).
    case noStore(path: String)
    /// A watched program cannot be read as an ELF program.
    case cannotWatch(path: String, reason: String)
    /// `--metrics-listen` cannot be bound.
    case cannotListen(address: String, errno: Int32)
    /// A value given on the command line is not usable (an address, a duration).
    case badValue(option: String, value: String, reason: String)

    public var exitCause: ExitCause {
        switch self {
        case .noTracefs, .kernelEvent, .storeBusy, .cannotListen: .unavailable
        case .storeUnusable, .database: .cannotCreate
        case .noStore, .cannotWatch: .noInput
        case .badValue: .usage
        }
    }

    public var description: String {
        switch self {
        case .noTracefs:
            "the kernel's tracing file system (/sys/kernel/tracing) is not available or not writable: "
                + "launchprof monitor runs as root"
        case .kernelEvent(let what, let errno):
            "cannot open the kernel event \(what): \(Self.text(errno))"
        case .storeUnusable(let path, let reason):
            "cannot use the store \(path): \(reason)"
        case .storeBusy(let path, let holder):
            "another launchprof monitor (\(holder)) records into \(path); stop it first, or give another --store"
        case .database(let path, let operation, let message):
            "the store \(path): \(operation) failed: \(message)"
        case .noStore(let path):
            "\(path) holds no launchprof monitor store (no launches.db): record with `launchprof monitor --store \(path)` first"
        case .cannotWatch(let path, let reason):
            "cannot watch \(path): \(reason)"
        case .cannotListen(let address, let errno):
            "cannot listen on \(address): \(Self.text(errno))"
        case .badValue(let option, let value, let reason):
            "\(option) \(value): \(reason)"
        }
    }

    static func text(_ errno: Int32) -> String { String(cString: strerror(errno)) }
}
