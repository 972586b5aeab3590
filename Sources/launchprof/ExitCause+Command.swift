import ArgumentParser
import LaunchprofReport

/// The CLI's side of exit causes: the help's summaries, and failing with a cause of the
/// command's own (a verdict, failed runs, a usage error found after parsing). Errors of the
/// modules below carry theirs (`LaunchprofError`) and are reported by `Launchprof.main`.
extension ExitCause {
    /// Prints `launchprof: message` on stderr and returns the exit to throw.
    func fail(_ message: String) -> ExitCode {
        Terminal.fail(message, status: rawValue)
    }

    var code: ExitCode { ExitCode(rawValue) }

    /// "Exit status: 0 …; 64 …" for a command's help, from the table.
    static func summary(_ statuses: [ExitCause], _ notes: [ExitCause: String] = [:]) -> String {
        "Exit status: " + statuses.map { "\($0.rawValue) \(notes[$0] ?? $0.meaning)" }.joined(separator: "; ")
            + ". (All codes: `launchprof help`.)"
    }
}
