import ArgumentParser
import LaunchprofCore
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// The options `launchprof run` and `launchprof prewarm` share: runs, readiness, timeout, the
/// child's environment and I/O, the report.
struct SessionOptions: ParsableArguments {
    @Option(name: [.short, .long], help: "Measured runs (1 to 100000).", transform: { try OptionValue.count($0, 1...100_000, unit: "the number of runs") })
    var runs = 10

    @Option(name: [.short, .long], help: "Runs before the measured ones, not recorded (0 to 100000).", transform: { try OptionValue.count($0, 0...100_000, unit: "the number of warm-up runs") })
    var warmup = 0

    @Flag(help: "Evict the closure's files from the page cache before each run; each run reports how much stayed resident.")
    var cold = false

    @Option(help: "When the launch is complete: exit, hook, listen, frame, stdout:REGEX, stderr:REGEX. Default: the app's first-frame hook, else its first frame on $DISPLAY, else the exit.", transform: { try OptionValue.readiness($0) })
    var ready: ReadinessPolicy?

    // `.unconditional`: `--timeout -1` is a value to refuse with its reason, not a missing one.
    @Option(parsing: .unconditional, help: "Seconds before a run that is not complete is ended and reported as a timeout (more than 0, at most 1000000).", transform: { try OptionValue.seconds($0, positive: true) })
    var timeout: Double = 10

    @Option(parsing: .unconditional, help: "Seconds the program may keep running once its launch is complete before launchprof ends it (0 to 1000000).", transform: { try OptionValue.seconds($0, positive: false) })
    var linger: Double = 0

    @Option(name: .customLong("env"), help: "KEY=VALUE added to the child's environment (repeatable).")
    var environment: [String] = []

    @Option(help: "The child's working directory.")
    var cwd: String?

    @Option(help: "The child's standard input: a file, or 'null' (the default).")
    var input = "null"

    @Option(help: "The child's stdout/stderr: 'null' (the default), 'inherit', or a file to append to.")
    var output = "null"

    @Option(help: "Write the LaunchReport JSON to this file (atomically; a link's target; '-', a pipe or a device in place).")
    var json: String?

    @Flag(help: "Exit 0 even when a run failed.")
    var ignoreFailure = false

    @Flag(help: "Do not pin the tracer and the child to one CPU before main.")
    var noPin = false

    @Flag(help: "Do not record the main thread's scheduler states (running, runnable, waits and their causes).")
    var noThreadStates = false

    func validate() throws {
        for pair in environment where !pair.contains("=") {
            throw ValidationError("--env takes KEY=VALUE, not \"\(pair)\".")
        }
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
        // Outputs last: a usage error is reported as such even with a bad output path.
        try OutputChecks.file(json, option: "--json")
        if output != "null" && output != "inherit" { try OutputChecks.file(output, option: "--output") }
    }

    /// The outputs these options write, as the user wrote them, for `OutputChecks.distinct`: the
    /// report, and the child's output when it is a file or launchprof's own stdout (`inherit`).
    var outputs: [(shown: String, path: String?)] {
        let childOutput: (shown: String, path: String?) = switch output {
        case "null": ("--output null", nil)
        case "inherit": ("--output inherit", "-")
        default: ("--output \(output)", output)
        }
        return [("--json \(json ?? "")", json), childOutput]
    }

    /// Whether the report goes to launchprof's own stdout (`--json -`, `--json /dev/stdout`):
    /// the text then goes to stderr, so stdout is the JSON alone.
    var jsonOnStandardOutput: Bool {
        guard let json else { return false }
        return (try? OutputDestination(json))?.isStandardOutput ?? false
    }

    /// The run configuration of `command` (the program and its arguments) with these options
    /// and `--sample`'s.
    func makeConfiguration(command: [String], sampling: SamplingOptions) throws -> RunConfiguration {
        var configuration = RunConfiguration(program: command[0], arguments: Array(command.dropFirst()))
        configuration.sampling = sampling.configuration
        configuration.runs = runs
        configuration.warmup = warmup
        configuration.cold = cold
        configuration.readiness = ready ?? .automatic
        configuration.timeoutNs = UInt64(timeout * 1e9)
        configuration.lingerNs = UInt64(linger * 1e9)
        configuration.inheritedEnvironment = ProcessEnvironment.current()
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
        configuration.threadStates = !noThreadStates
        return configuration
    }
}
