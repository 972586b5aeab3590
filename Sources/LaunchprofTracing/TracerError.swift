import LaunchprofELF
import LaunchprofReport

/// Why tracing a launch failed. Each case names its subject.
public enum TracerError: LaunchprofError, Sendable, Equatable {
    /// The program could not be executed (the errno of the exec, e.g. ENOENT, EACCES, ENOEXEC).
    case cannotExecute(path: String, errno: Int32)
    /// A ptrace or wait request failed on a process.
    case ptrace(request: String, pid: Int32, errno: Int32)
    /// The child stopped in a way the tracer cannot continue from.
    case unexpectedStop(pid: Int32, detail: String)
    /// What observes the launch could not be set up for this executable (its uprobes).
    case cannotObserve(path: String, detail: String)

    public var description: String {
        switch self {
        case .cannotExecute(let path, let errno):
            if let interpreter = Self.missingInterpreter(path, errno) {
                "Executable \"\(path)\" cannot be executed: its ELF interpreter \(interpreter) does not exist (\(errnoDescription(errno)))."
            } else {
                "Executable \"\(path)\" cannot be executed: \(errnoDescription(errno))."
                    + (errno == EPERM ? " Is ptrace permitted here? Check kernel.yama.ptrace_scope (3 forbids it), seccomp, and a container's capabilities." : "")
            }
        case .ptrace(let request, let pid, let errno):
            "ptrace \(request) on process \(pid) failed: \(errnoDescription(errno))"
                + (errno == 1 ? " (is ptrace permitted here? check kernel.yama.ptrace_scope and seccomp)" : "")
        case .unexpectedStop(let pid, let detail):
            "Process \(pid) stopped unexpectedly: \(detail)"
        case .cannotObserve(let path, let detail):
            "Cannot observe the launch of \"\(path)\": \(detail)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension TracerError {
    /// The program cannot be executed, traced or observed here; an interpreter that does not
    /// exist is missing input, as inspect says.
    public var exitCause: ExitCause {
        if case .cannotExecute(let path, let errno) = self, Self.missingInterpreter(path, errno) != nil { return .noInput }
        return .unavailable
    }

    /// The ELF interpreter an execve's ENOENT was about: the file exists, its PT_INTERP does not.
    static func missingInterpreter(_ path: String, _ errno: Int32) -> String? {
        guard errno == ENOENT, access(path, F_OK) == 0,
            let interpreter = try? ELFImage.read(path: path).interpreter, access(interpreter, F_OK) != 0
        else { return nil }
        return interpreter
    }

    /// The process vanished under a request (ESRCH): killed while stopped, say by a timeout.
    var processIsGone: Bool {
        if case .ptrace(_, _, let errno) = self { return errno == ESRCH }
        return false
    }
}

/// The C library's message for an errno value.
func errnoDescription(_ value: Int32) -> String {
    guard let text = strerror(value) else { return "errno \(value)" }
    return String(cString: text)
}
