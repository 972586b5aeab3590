import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

/// `launchprof prewarm PROGRAM [ARGS…]`: launch ahead of use, freeze, hold, resume as the user's
/// tap, and compare with an ordinary launch.
struct PrewarmCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prewarm",
        abstract: "Prewarm a program (freeze it at main), resume it later, and time the launch from the resume.",
        discussion: """
            Examples:
              launchprof prewarm -r 5 --hold 500ms ./myapp
              launchprof prewarm --pool 2 --ttl 30s --hold exponential:2s ./myapp

            Each run pairs a prewarmed launch (started with ActivePrewarm=1, frozen at --freeze-at, \
            held for --hold, resumed) with an ordinary launch. The prewarmed launch reports \
            metrics.optimizedTimeToFirstFrameNs from the resume; the prewarm part and the hold \
            are reported apart (run.prewarm). The summary gives the saving (prewarm.savingNs), \
            the memory a frozen process holds (prewarm.frozenPSSBytes, PSS), and the hazards \
            found by an untimed scan of the prewarm part. Same options as `run`.

            \(ExitCause.summary([.success, .failed, .usage, .badInput, .noInput, .unavailable, .software, .cannotCreate, .interrupted], [.unavailable: "the program cannot be executed, traced, or frozen where asked"]))
            """)

    @OptionGroup var options: SessionOptions

    @Option(help: "Where to freeze: main (before any of the app's own work) or willFinishLaunching (before the app's first hooked phase; needs the launch hooks).")
    var freezeAt = "main"

    @Option(help: "How long a prewarmed process stays frozen: a duration (500ms, 2s, 1m), uniform:MIN-MAX or exponential:MEAN. With --pool, the time between the user's launches.")
    var hold = "1s"

    @Option(help: "Seed for random holds.")
    var seed: UInt64 = 1

    @Option(help: "Keep N frozen processes ready and refill after each launch (a pre-forked pool).")
    var pool = 0

    @Option(help: "With --pool: end a frozen process not launched within this duration.")
    var ttl: String?

    @Flag(help: "Skip the untimed hazard scan of the prewarm part.")
    var noHazardScan = false

    @OptionGroup(title: "Exports") var exports: ExportOptions

    @OptionGroup(title: "Sampling") var sampling: SamplingOptions

    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments.")
    var command: [String] = []

    mutating func validate() throws {
        command = try CommandOptions.programAndArguments(command, of: Self.self)
        guard !command.isEmpty else { throw ValidationError("Missing PROGRAM to prewarm.") }
        try OutputChecks.distinct(options.outputs + [("--trace \(exports.trace ?? "")", exports.trace), ("--folded \(sampling.folded ?? "")", sampling.folded)])
        guard PrewarmConfiguration.FreezePoint(rawValue: freezeAt) != nil else {
            throw ValidationError("--freeze-at \(freezeAt): use main or willFinishLaunching.")
        }
        do {
            _ = try PrewarmHold(argument: hold)
            if let ttl { _ = try PrewarmHold.duration(ttl) }
        } catch {
            throw ValidationError(error.description)
        }
        guard pool >= 0, pool <= 64 else { throw ValidationError("--pool takes 0 to 64 processes.") }
        if ttl != nil, pool == 0 { throw ValidationError("--ttl needs --pool.") }
    }

    func run() throws {
        var run = try options.makeConfiguration(command: command)
        run.sampling = sampling.configuration
        var configuration = PrewarmConfiguration(run: run)
        configuration.freezeAt = PrewarmConfiguration.FreezePoint(rawValue: freezeAt) ?? .main
        configuration.hold = try PrewarmHold(argument: hold)
        configuration.seed = seed
        configuration.pool = pool
        configuration.ttlNs = try ttl.map { (text) throws(PrewarmArgumentError) in try PrewarmHold.duration(text) }
        configuration.scanHazards = !noHazardScan
        let session = try PrewarmSession(configuration: configuration)
        let writer = try options.makeWriter(target: session.target, mode: session.mode)
        let interactive = Terminal.isInteractive(2)
        let collector = exports.collector()
        do throws(RunError) {
            _ = try session.run(into: writer, progress: { done, total in
                if interactive { Terminal.write(2, "\rlaunchprof: prewarm \(done)/\(total)") }
            }, onRun: collector?.onRun)
            if interactive { Terminal.write(2, "\r\u{1b}[K") }
        } catch {
            writer.cancel()
            if interactive { Terminal.write(2, "\n") }
            throw error
        }
        let report = try writer.finish()
        Terminal.write(options.jsonOnStandardOutput ? 2 : 1, PrewarmTextRenderer().render(report, hold: configuration.hold.description, freezeAt: configuration.freezeAt.rawValue))
        if let json = options.json { Terminal.write(2, "launchprof: report written to \(json)\n") }
        try exports.write(report, collector: collector)
        try sampling.writeFolded(session.runSession.foldedStacks)
        if report.summary.failedRuns > 0 && !options.ignoreFailure {
            Terminal.write(2, "launchprof: \(report.summary.failedRuns) of \(report.summary.runs) prewarmed launches failed\n")
            throw ExitCause.failed.code
        }
    }
}
