import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

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

            \(ExitCause.summary([.success, .failed, .usage, .badInput, .noInput, .unavailable, .software, .cannotCreate, .interrupted]))
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
        try OutputChecks.distinct(options.outputs + [("--trace \(exports.trace ?? "")", exports.trace), ("--folded \(sampling.folded ?? "")", sampling.folded)])
    }

    func run() throws {
        var configuration = try options.makeConfiguration(command: command)
        lifecycle.apply(to: &configuration)
        observerOptions.apply(to: &configuration)
        configuration.sampling = sampling.configuration
        let session = try RunSession(configuration: configuration)
        let writer = try options.makeWriter(target: session.target, mode: session.mode)
        let interactive = Terminal.isInteractive(2)
        let collector = exports.collector()
        let lastRun: LaunchRun?
        do throws(RunError) {
            lastRun = try session.run(into: writer, progress: { done, total in
                if interactive { Terminal.write(2, "\rlaunchprof: run \(done)/\(total)") }
            }, onRun: collector?.onRun)
            if interactive { Terminal.write(2, "\r\u{1b}[K") }
        } catch {
            writer.cancel()
            if interactive { Terminal.write(2, "\n") }
            throw error
        }
        var report = try writer.finish()
        report.runs = lastRun.map { [$0] } ?? []
        let textFD: Int32 = options.jsonOnStandardOutput ? 2 : 1
        let text = try TextWaterfallRenderer(colour: Terminal.wantsColour(textFD)).render(report)
        Terminal.write(textFD, text)
        if let json = options.json { Terminal.write(2, "launchprof: report written to \(json)\n") }
        try exports.write(report, collector: collector)
        try sampling.writeFolded(session.foldedStacks)
        if report.summary.failedRuns > 0 && !options.ignoreFailure {
            Terminal.write(2, "launchprof: \(report.summary.failedRuns) of \(report.summary.runs) runs failed\n")
            throw ExitCause.failed.code
        }
    }
}
