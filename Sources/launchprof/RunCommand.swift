import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

/// `launchprof run PROGRAM [ARGS…]`: launch a program N times under the tracer and show where
/// its launch time goes.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Launch a program under ptrace N times and time every launch phase.",
        usage: """
            launchprof run [<options>] PROGRAM [ARGS…]
            launchprof run [<options>] -- PROGRAM [ARGS…]
            """,
        discussion: """
            Examples:
              launchprof run -r 20 ./myapp --its-own-flag
              launchprof run --ready listen -- ./server --port 8080
              launchprof run -r 20 --sample --json app.json ./myapp

            Options go before PROGRAM; everything after it is the program's own (`launchprof run \
            -r 5 git --version`). `--` ends launchprof's options.

            Phases: exec, loader.map, loader.relocate, loader.init (per library), program.init, \
            main, the app's hooked phases, windowMapped, firstFrame, extendedLaunch, exit. Times \
            are ns from the spawn.

            With `--json -` (or a path that is launchprof's stdout) the report is stdout's only \
            content and the waterfall goes to stderr.

            \(ExitCause.summary([.success, .failed, .usage, .badInput, .noInput, .unavailable, .software, .cannotCreate, .ioError, .noPermission, .interrupted]))
            """)

    @OptionGroup var options: SessionOptions

    @OptionGroup var lifecycle: LifecycleOptions

    @OptionGroup(title: "Exports") var exports: ExportOptions

    @OptionGroup var observerOptions: ObserverOptions

    @OptionGroup(title: "Sampling") var sampling: SamplingOptions

    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments.")
    var command: [String] = []

    mutating func validate() throws {
        command = try CommandOptions.programAndArguments(command, of: Self.self)
        guard !command.isEmpty else { throw ValidationError("Missing PROGRAM to run.") }
        try SessionOutputs.checkDistinct(options, exports, sampling, command: command)
    }

    func run() throws {
        var configuration = try options.makeConfiguration(command: command, sampling: sampling)
        lifecycle.apply(to: &configuration)
        observerOptions.apply(to: &configuration)
        let session = try RunSession(configuration: configuration)
        let outputs = SessionOutputs(options, exports: exports, sampling: sampling, counting: "run")
        let report = try outputs.run(LaunchPipeline(session, sinks: outputs.sinks))
        let text = try TextWaterfallRenderer(colour: Terminal.wantsColour(outputs.textStream)).render(report)
        Terminal.write(outputs.textStream, text)
        try outputs.finish(report, failed: "runs")
    }
}
