import LaunchprofDisplay
import LaunchprofELF
import LaunchprofReport
import LaunchprofSampling
import LaunchprofTracing

/// Why `launchprof run` could not measure a program. Each case names its subject.
public enum RunError: LaunchprofError, Sendable {
    case programNotFound(name: String, searched: String)
    /// Nothing to execute at the path: no such file, or a directory.
    case noProgram(path: String, reason: String)
    /// A file that cannot be executed or traced as asked (permissions, not a regular file, a bad
    /// `#!` line, a program that never reaches where prewarm freezes it).
    case notExecutable(path: String, reason: String)
    case interpreterMissing(script: String, interpreter: String)
    case cannotReadProgram(ELFError)
    case tracer(TracerError)
    case report(LaunchReportError)
    case system(operation: String, errno: Int32)
    /// `--sample` cannot open its perf events on the child (no permission): the program cannot
    /// be sampled here, which is no internal error.
    case sampling(SamplingError)
    /// Ctrl-C (or SIGTERM/SIGHUP) arrived: the child was killed and no report was written.
    case interrupted(signal: Int32)
    /// `--observer uprobe` cannot run here, or a probe could not be armed.
    case observer(UprobeError)
    /// `--ready frame`: no display to watch, or the display lacks what the observer needs.
    case display(FrameObserverError)
    /// `--sample`: libunwind's remote unwinder (loaded on first use) is not installed.
    case unwinderMissing(missing: String)

    public var description: String {
        switch self {
        case .programNotFound(let name, let searched):
            "Program \"\(name)\" is not found in PATH (\(searched))."
        case .noProgram(let path, let reason), .notExecutable(let path, let reason):
            "Program \"\(path)\" cannot be executed: \(reason)."
        case .interpreterMissing(let script, let interpreter):
            "Script \"\(script)\" names interpreter \"\(interpreter)\", which does not exist."
        case .cannotReadProgram(let error): error.description
        case .tracer(let error): error.description
        case .report(let error): error.description
        case .system(let operation, let errno):
            "\(operation) failed: \(String(cString: strerror(errno)))"
        case .interrupted(let signal):
            "Interrupted by signal \(signal): the child was killed and no report was written."
        case .observer(let error): error.description
        case .sampling(let error): error.description
        case .display(let error): error.description
        case .unwinderMissing(let missing):
            "--sample needs libunwind's remote unwinder, and \(missing) cannot be loaded (Debian: apt-get install libunwind8)"
        }
    }

    public var exitCause: ExitCause {
        switch self {
        case .programNotFound, .noProgram, .interpreterMissing: .noInput
        case .notExecutable, .unwinderMissing: .unavailable
        case .cannotReadProgram(let error): error.exitCause
        case .tracer(let error): error.exitCause
        case .observer(let error): error.exitCause
        case .sampling(let error): error.exitCause
        case .display(let error): error.exitCause
        case .report(let error): error.exitCause
        case .system: .software
        case .interrupted: .interrupted
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension RunError {
    /// `body`, its report error made the run's (the report file is part of a run's work).
    static func reporting<T>(_ body: () throws(LaunchReportError) -> T) throws(RunError) -> T {
        do {
            return try body()
        } catch {
            throw .report(error)
        }
    }
}
