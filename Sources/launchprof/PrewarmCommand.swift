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

            \(ExitCause.summary([.success, .failed, .usage, .badInput, .noInput, .unavailable, .software, .cannotCreate, .ioError, .noPermission, .interrupted], [.unavailable: "the program cannot be executed, traced, or frozen where asked"]))
            """)

    @OptionGroup var options: SessionOptions

    @OptionGroup var prewarm: PrewarmOptions

    @OptionGroup(title: "Exports") var exports: ExportOptions

    @OptionGroup(title: "Sampling") var sampling: SamplingOptions

    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments.")
    var command: [String] = []

    mutating func validate() throws {
        command = try CommandOptions.programAndArguments(command, of: Self.self)
        guard !command.isEmpty else { throw ValidationError("Missing PROGRAM to prewarm.") }
        try SessionOutputs.checkDistinct(options, exports, sampling, command: command)
    }

    func run() throws {
        let session = try PrewarmSession(
            configuration: prewarm.configuration(run: try options.makeConfiguration(command: command, sampling: sampling)))
        let outputs = SessionOutputs(options, exports: exports, sampling: sampling, counting: "prewarm")
        let report = try outputs.run(LaunchPipeline(session, sinks: outputs.sinks))
        Terminal.write(
            outputs.textStream,
            PrewarmTextRenderer().render(report, hold: prewarm.hold.description, freezeAt: prewarm.freezeAt.rawValue))
        try outputs.finish(report, failed: "prewarmed launches")
    }
}
