import ArgumentParser
import LaunchprofReport
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// launchprof: measures and explains what happens between exec and a program being ready.
///
/// Synchronous on purpose: an async root starts the concurrency runtime's worker threads,
/// which costs start-up time `inspect` is measured on, and no subcommand needs it.
@main
struct Launchprof: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launchprof",
        abstract: "A launch-performance profiler for Linux programs.",
        discussion: """
            Exit status, the same for the same cause in every command:
            \(ExitCause.table)
            """,
        version: LaunchprofVersion.description,
        subcommands: [InspectCommand.self, RunCommand.self, PrewarmCommand.self, ReportCommand.self]
            + [BenchCommand.self, CompareCommand.self, MergeCommand.self, ExportCommand.self, CalibrateCommand.self]
            + [MonitorCommand.self])

    /// `launchprof inspect [--json] PROGRAM` goes straight to the command: the argument
    /// parser reflects over every subcommand's options first, which was a third of inspect's
    /// run time on a small program (inspect is benchmarked against `ldd`). Everything else,
    /// help and usage errors included, goes through the parser.
    static func main() {
        // Started as the uprobe holder, this process is that and nothing else.
        UprobeHolder.serveIfStartedAsHolder()
        Terminal.claimStandardDescriptors()
        if let request = InspectCommand.Request(arguments: Array(CommandLine.arguments.dropFirst())) {
            run { try InspectCommand.execute(request) }
            return
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let name = arguments.first,
            let command = configuration.subcommands.first(where: { $0.configuration.commandName == name })
        {
            do {
                let takesProgram = command == RunCommand.self || command == PrewarmCommand.self
                try CommandOptions.refuseNegativeValues(Array(arguments.dropFirst()), of: command, takesProgram: takesProgram)
                try CommandOptions.refuseBadSampleRate(Array(arguments.dropFirst()), of: command, takesProgram: takesProgram)
            } catch {
                // Printed here: the subcommand's own exit would name it without "launchprof".
                Terminal.write(2, "Error: \(error)\n  See 'launchprof \(name) --help' for more information.\n")
                Glibc.exit(ExitCause.usage.rawValue)
            }
        }
        run {
            var command = try parseAsRoot(arguments)
            try command.run()
        }
    }

    /// Runs a command to its end. An error of launchprof's own is said once, as
    /// `launchprof: message`, and exits with the cause it carries; the parser's own (usage
    /// errors, help, `ExitCode`) exit as the parser says.
    private static func run(_ body: () throws -> Void) {
        do {
            try body()
        } catch let error as any LaunchprofError {
            Terminal.write(2, "launchprof: \(error.description)\n")
            Glibc.exit(error.exitCause.rawValue)
        } catch let code as ExitCode where code.rawValue < ExitCause.usage.rawValue {
            // A verdict (compare's 2, a failed run's 1) on an output that did not arrive is 74.
            Terminal.finishStandardOutput()
            Glibc.exit(code.rawValue)
        } catch {
            exit(withError: error)
        }
        Terminal.finishStandardOutput()
    }
}
