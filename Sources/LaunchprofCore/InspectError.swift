import LaunchprofELF
import LaunchprofReport

/// Why `launchprof inspect` could not inspect a program. Each case names its subject.
public enum InspectError: LaunchprofError, Sendable, Equatable {
    /// A bare command name not found in any `PATH` directory.
    case notFoundOnPath(name: String, path: String)
    /// The program (or a script's interpreter) could not be read as an ELF file.
    case file(ELFError)
    /// A `#!` script whose interpreter does not exist.
    case scriptInterpreterMissing(script: String, interpreter: String)
    /// A program whose ELF interpreter (PT_INTERP) does not exist: the kernel's execve fails
    /// with ENOENT, which names neither.
    case programInterpreterMissing(program: String, interpreter: String)
    /// A `#!` line without an interpreter, or scripts nested deeper than the kernel allows.
    case badScript(script: String, reason: String)

    public var exitCause: ExitCause {
        switch self {
        case .notFoundOnPath, .scriptInterpreterMissing, .programInterpreterMissing: .noInput
        case .badScript: .badInput
        case .file(let error): error.exitCause
        }
    }

    public var description: String {
        switch self {
        case .notFoundOnPath(let name, let path):
            return "\(name): command not found in PATH (\(path))"
        case .file(let error):
            return error.description
        case .scriptInterpreterMissing(let script, let interpreter):
            return "\(script): script interpreter \(interpreter) not found"
        case .badScript(let script, let reason):
            return "\(script): \(reason)"
        case .programInterpreterMissing(let program, let interpreter):
            return "\(program): its ELF interpreter \(interpreter) does not exist, so the kernel refuses to run it"
                + " (execve: No such file or directory)"
        }
    }
}
