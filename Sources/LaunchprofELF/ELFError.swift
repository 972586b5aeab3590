import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Why an ELF file, the loader cache or a dependency could not be read.
///
/// Every case names its subject (the path) so one line of text is enough for the user.
public enum ELFError: LaunchprofError, Sendable, Equatable {
    /// Nothing exists at the path (or a directory on the way is missing).
    case notFound(path: String)
    /// The path names a directory, not a program.
    case isDirectory(path: String)
    /// The file exists but cannot be opened or read (`errno` from the failing call).
    case unreadable(path: String, errno: Int32)
    /// The path names a FIFO, a device or a socket: never opened (a FIFO's open would block).
    case notAFile(path: String, kind: String)
    /// The file is empty.
    case empty(path: String)
    /// The file does not start with the ELF magic number.
    case notELF(path: String)
    /// The file ends before a structure its headers describe.
    case truncated(path: String, detail: String)
    /// A structure is present but inconsistent (bad offsets, sizes, counts).
    case malformed(path: String, detail: String)
    /// A 32-bit (or otherwise non-64-bit) ELF file.
    case unsupportedClass(path: String, elfClass: String)
    /// An ELF file for another architecture or byte order.
    case unsupportedMachine(path: String, machine: String)

    /// The path this error is about.
    public var path: String {
        switch self {
        case .notFound(let path), .isDirectory(let path), .notAFile(let path, _), .unreadable(let path, _), .empty(let path),
            .notELF(let path), .truncated(let path, _), .malformed(let path, _),
            .unsupportedClass(let path, _), .unsupportedMachine(let path, _):
            return path
        }
    }

    /// The same error about another subject (byte parsers do not know the file they read).
    func about(_ path: String) -> ELFError {
        switch self {
        case .notFound: return .notFound(path: path)
        case .isDirectory: return .isDirectory(path: path)
        case .notAFile(_, let kind): return .notAFile(path: path, kind: kind)
        case .unreadable(_, let errno): return .unreadable(path: path, errno: errno)
        case .empty: return .empty(path: path)
        case .notELF: return .notELF(path: path)
        case .truncated(_, let detail): return .truncated(path: path, detail: detail)
        case .malformed(_, let detail): return .malformed(path: path, detail: detail)
        case .unsupportedClass(_, let elfClass): return .unsupportedClass(path: path, elfClass: elfClass)
        case .unsupportedMachine(_, let machine): return .unsupportedMachine(path: path, machine: machine)
        }
    }

    public var description: String {
        switch self {
        case .notFound(let path): return "\(path): no such file or directory"
        case .isDirectory(let path): return "\(path): is a directory, not a program"
        case .notAFile(let path, let kind): return "\(path): is \(kind), not a program file"
        case .unreadable(let path, let errno):
            return "\(path): cannot be read: \(String(cString: strerror(errno)))"
                + (errno == EACCES ? " (launchprof reads the program to time its loader: execute permission alone is not enough)" : "")
        case .empty(let path): return "\(path): empty file, not an ELF program"
        case .notELF(let path): return "\(path): not an ELF file (no ELF magic number)"
        case .truncated(let path, let detail): return "\(path): truncated ELF file (\(detail))"
        case .malformed(let path, let detail): return "\(path): malformed ELF file (\(detail))"
        case .unsupportedClass(let path, let elfClass):
            return "\(path): \(elfClass) ELF file; launchprof inspects 64-bit x86-64 programs only"
        case .unsupportedMachine(let path, let machine):
            return "\(path): ELF file for \(machine); launchprof inspects x86-64 programs only"
        }
    }
}

extension ELFError {
    public var exitCause: ExitCause {
        switch self {
        case .notFound, .isDirectory, .notAFile: .noInput
        case .unreadable(_, let errno): errno == EACCES || errno == EPERM ? .noPermission : .noInput
        case .empty, .notELF, .truncated, .malformed: .badInput
        case .unsupportedClass, .unsupportedMachine: .unavailable
        }
    }
}
