#if canImport(Glibc)
import Glibc
#endif

/// What can go wrong while preparing or running a benchmark's child processes.
public enum BenchmarkError: Error, CustomStringConvertible {
    case spawnFailed(path: String, errno: Int32)
    case systemCall(name: String, errno: Int32)
    case compileFailed(source: String, status: Int32)
    case childFailed(path: String, status: Int32)
    case badOutput(path: String, output: String)
    case missingTool(name: String, hint: String)

    public var description: String {
        switch self {
        case .spawnFailed(let path, let errno):
            "cannot spawn \(path): \(String(cString: strerror(errno)))"
        case .systemCall(let name, let errno):
            "\(name) failed: \(String(cString: strerror(errno)))"
        case .compileFailed(let source, let status):
            "cc failed on \(source) (status \(status)); is a C compiler installed at /usr/bin/cc?"
        case .childFailed(let path, let status):
            "\(path) ended with wait status \(status)"
        case .badOutput(let path, let output):
            "\(path) printed something unexpected: \(output.prefix(200))"
        case .missingTool(let name, let hint):
            "\(name) not found: \(hint)"
        }
    }
}
