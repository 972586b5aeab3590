#if canImport(Glibc)
import Glibc
#endif

/// A program found the way a shell finds it, with what the kernel will actually run.
public struct LocatedProgram: Sendable, Equatable {
    /// The name as the user typed it (the child's argv[0]).
    public var name: String
    /// The file launchprof executes: absolute, symlinks not followed (as a shell would exec it).
    public var path: String
    /// For a `#!` script: its interpreter and optional argument.
    var script: ScriptLine?
    /// The ELF file the kernel starts: the script's interpreter, else `path`.
    public var imagePath: String

    /// argv for the child: the name as typed, then the arguments.
    func argv(_ arguments: [String]) -> [String] { [name] + arguments }

    /// Files besides the ELF closure that a cold launch reads (the script itself).
    var extraFiles: [String] { script == nil ? [] : [path] }
}

/// Finds programs: `PATH` lookup as a shell does, executable checks, `#!` lines.
public enum ProgramLocator {
    public static func locate(_ name: String, environment: [String: String]) throws(RunError) -> LocatedProgram {
        let found = try find(name, environment: environment)
        var status = stat()
        guard stat(found, &status) == 0 else {
            throw .noProgram(path: found, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw .noProgram(path: found, reason: "it is a directory") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notExecutable(path: found, reason: "it is not a regular file") }
        guard access(found, X_OK) == 0 else {
            throw .notExecutable(path: found, reason: "it has no execute permission for this user")
        }
        let path = absolute(found)
        let script: ScriptLine?
        do {
            script = try ScriptLine.read(path)
        } catch {
            throw .notExecutable(path: path, reason: "its #! line cannot be read")
        }
        if let script, script.interpreter.isEmpty {
            throw .notExecutable(path: path, reason: "its #! line names no interpreter")
        }
        // The kernel ignores a script's setuid bit: only a program's can be lost under ptrace.
        if script == nil { PrivilegedProgram.warn(path) }
        return LocatedProgram(name: name, path: path, script: script, imagePath: script?.interpreter ?? path)
    }

    /// The `PATH` a shell would search.
    public static func searchPath(_ environment: [String: String]) -> String {
        environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    }

    /// The path a shell would execute for `name`: as given when it contains a slash, else the
    /// first executable regular file of that name in a `PATH` directory; nil when there is none.
    public static func search(_ name: String, environment: [String: String]) -> String? {
        guard !name.contains("/") else { return name }
        return candidates(name, environment: environment).first { candidate in
            var status = stat()
            return stat(candidate, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && access(candidate, X_OK) == 0
        }
    }

    /// The paths `search` tries for `name`, in order: `name` itself when it contains a slash,
    /// else `name` in each `PATH` directory.
    public static func candidates(_ name: String, environment: [String: String]) -> [String] {
        guard !name.contains("/") else { return [name] }
        return searchPath(environment).split(separator: ":", omittingEmptySubsequences: false).map {
            ($0.isEmpty ? "." : String($0)) + "/" + name
        }
    }

    static func find(_ name: String, environment: [String: String]) throws(RunError) -> String {
        guard let path = search(name, environment: environment) else {
            throw .programNotFound(name: name, searched: searchPath(environment))
        }
        return path
    }

    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }
}
