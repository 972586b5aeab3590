import ArgumentParser
import LaunchprofCore
import LaunchprofReport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `launchprof run PROGRAM [ARGS…]`: launch a program N times under the tracer and show where
/// its launch time goes.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Launch a program under ptrace N times and time every launch phase.",
        discussion: """
            Phases: exec, loader.map, loader.relocate, loader.init (per library), program.init, \
            main, the app's hooked phases, firstFrame, extendedLaunch, exit. Times are ns from \
            the spawn.

            Exit status: 0 all runs succeeded; 1 a run failed (non-zero exit, signal, timeout) \
            unless --ignore-failure; 64 usage error; 66 program not found; 69 program cannot be \
            executed or traced; 70 internal error; 73 the report cannot be written; 130 \
            interrupted (Ctrl-C): the child was killed and no report was written.
            """)

    @Option(name: [.short, .long], help: "Measured runs.")
    var runs = 10

    @Option(name: [.short, .long], help: "Runs before the measured ones, not recorded.")
    var warmup = 0

    @Flag(help: "Evict the closure's files from the page cache before each run (and drop caches as root); each run reports how much stayed resident.")
    var cold = false

    @Option(help: "When the launch is complete: exit, hook, listen, stdout:REGEX, stderr:REGEX. Default: the app's first-frame hook, else the exit.")
    var ready: String?

    @Option(help: "Seconds before a run that is not complete is ended and reported as a timeout.")
    var timeout: Double = 10

    @Option(help: "Seconds the program may keep running once its launch is complete before launchprof ends it.")
    var linger: Double = 0

    @Option(name: .customLong("env"), help: "KEY=VALUE added to the child's environment (repeatable).")
    var environment: [String] = []

    @Option(help: "The child's working directory.")
    var cwd: String?

    @Option(help: "The child's standard input: a file, or 'null' (the default).")
    var input = "null"

    @Option(help: "The child's stdout/stderr: 'null' (the default), 'inherit', or a file to append to.")
    var output = "null"

    @Option(help: "Write the LaunchReport JSON to this file (atomically).")
    var json: String?

    @Flag(help: "Exit 0 even when a run failed.")
    var ignoreFailure = false

    @Flag(help: "Do not pin the tracer and the child to one CPU before main.")
    var noPin = false

    @OptionGroup(title: "Sampling") var sampling: SamplingOptions

    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments.")
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("Missing PROGRAM to run.") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1.") }
        guard warmup >= 0 else { throw ValidationError("--warmup cannot be negative.") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive.") }
        guard linger >= 0 else { throw ValidationError("--linger cannot be negative.") }
        for pair in environment where !pair.contains("=") {
            throw ValidationError("--env takes KEY=VALUE, not \"\(pair)\".")
        }
        if let ready { _ = try readiness(ready) }
        // Files the child is given are checked here, so a typo is a usage error naming the
        // option, not a failed spawn.
        if input != "null", access(input, R_OK) != 0 {
            throw ValidationError("--input \(input): \(String(cString: strerror(errno))).")
        }
        if let cwd {
            var status = stat()
            guard stat(cwd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw ValidationError("--cwd \(cwd): not a directory.")
            }
        }
    }

    func run() throws {
        let configuration = try makeConfiguration()
        let session: RunSession
        do throws(RunError) {
            session = try RunSession(configuration: configuration)
        } catch {
            throw Terminal.fail(error.description, status: Self.exitStatus(for: error))
        }
        let writer: LaunchReportWriter
        do throws(LaunchReportError) {
            let host = HostInfo.current()
            if let json {
                writer = try LaunchReportWriter(path: json, target: session.target, host: host, mode: session.mode)
            } else {
                writer = try LaunchReportWriter(
                    output: DiscardingReportOutput(), target: session.target, host: host, mode: session.mode)
            }
        } catch {
            throw Terminal.fail(error.description, status: 73)
        }
        let interactive = Terminal.isInteractive(2)
        let lastRun: LaunchRun?
        do throws(RunError) {
            lastRun = try session.run(into: writer, progress: { done, total in
                if interactive { Terminal.write(2, "\rlaunchprof: run \(done)/\(total)") }
            })
            if interactive { Terminal.write(2, "\r\u{1b}[K") }
        } catch {
            writer.cancel()
            if interactive { Terminal.write(2, "\n") }
            throw Terminal.fail(error.description, status: Self.exitStatus(for: error))
        }
        var report: LaunchReport
        do throws(LaunchReportError) {
            report = try writer.finish()
        } catch {
            throw Terminal.fail(error.description, status: 73)
        }
        report.runs = lastRun.map { [$0] } ?? []
        do throws(LaunchReportError) {
            let text = try TextWaterfallRenderer(colour: Terminal.wantsColour(1)).render(report)
            Terminal.write(1, text)
        } catch {
            throw Terminal.fail(error.description, status: 70)
        }
        if let json { Terminal.write(2, "launchprof: report written to \(json)\n") }
        if let folded = sampling.folded { try writeFolded(session.foldedStacks, to: folded) }
        if report.summary.failedRuns > 0 && !ignoreFailure {
            Terminal.write(2, "launchprof: \(report.summary.failedRuns) of \(report.summary.runs) runs failed\n")
            throw ExitCode(1)
        }
    }

    private func makeConfiguration() throws -> RunConfiguration {
        var configuration = RunConfiguration(program: command[0], arguments: Array(command.dropFirst()))
        configuration.runs = runs
        configuration.warmup = warmup
        configuration.cold = cold
        configuration.readiness = try ready.map(readiness) ?? .automatic
        configuration.timeoutNs = UInt64(timeout * 1e9)
        configuration.lingerNs = UInt64(linger * 1e9)
        configuration.inheritedEnvironment = ProcessInfo.processInfo.environment
        for pair in environment {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            configuration.environment[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        configuration.workingDirectory = cwd
        configuration.input = input == "null" ? .null : .file(input)
        switch output {
        case "null": configuration.output = .null
        case "inherit": configuration.output = .inherit
        default: configuration.output = .file(output)
        }
        configuration.pinCPU = !noPin
        configuration.sampling = sampling.configuration
        return configuration
    }

    private func readiness(_ argument: String) throws -> LaunchReadiness {
        do {
            let value = try LaunchReadiness(argument: argument)
            switch value {
            case .stdout(let pattern), .stderr(let pattern):
                _ = try Regex(pattern)
            default: break
            }
            return value
        } catch {
            throw ValidationError("--ready \(argument): \(error)")
        }
    }

    static func exitStatus(for error: RunError) -> Int32 {
        switch error {
        case .programNotFound, .interpreterMissing: 66
        case .notExecutable, .cannotReadProgram, .tracer: 69
        case .report: 73
        case .system: 70
        case .interrupted: 130
        }
    }
}
