// The two names the ELF parsers' errors take from LaunchprofReport (ExitCause, LaunchprofError),
// with the codes they use: Fuzz/run.sh compiles this as a module of that name, so the fuzzer
// builds the parser sources as they are, without the report module's other files.
public enum ExitCause: Int32, Sendable {
    case badInput = 65
    case noInput = 66
    case unavailable = 69
    case noPermission = 77
}

public protocol LaunchprofError: Error, CustomStringConvertible {
    var exitCause: ExitCause { get }
}
