import ArgumentParser
import LaunchprofCore
import LaunchprofReport

/// What `run` and `prewarm` do with their runs besides the text: the sinks the pipeline feeds
/// (the progress line, the report file, the runs the exports need, folded stacks), then the
/// files and the exit status once the text is out.
struct SessionOutputs {
    let options: SessionOptions
    let exports: ExportOptions
    let sampling: SamplingOptions
    private let progress: TerminalProgress
    private let report: StreamingReportSink?
    private let collector: RunCollector?
    private let folded: FoldedStacksSink?
    /// What stopped the session early (Ctrl-C), once `run` returned.
    private let interruption = Interruption()

    private final class Interruption {
        var error: RunError?
    }

    /// `counting` names a launch on the progress line ("run", "prewarm").
    init(_ options: SessionOptions, exports: ExportOptions, sampling: SamplingOptions, counting: String) {
        self.options = options
        self.exports = exports
        self.sampling = sampling
        progress = TerminalProgress(counting)
        report = options.json.map { StreamingReportSink(path: $0) }
        collector = exports.keepsRuns ? RunCollector() : nil
        folded = sampling.folded == nil ? nil : FoldedStacksSink()
    }

    /// Refuses two outputs to one place, and an output that is the program, its `--input`, or
    /// launchprof (`validate()`).
    static func checkDistinct(
        _ options: SessionOptions, _ exports: ExportOptions, _ sampling: SamplingOptions, command: [String]
    ) throws {
        let outputs = options.outputs + exports.outputs + [("--folded \(sampling.folded ?? "")", sampling.folded)]
        try OutputChecks.distinct(outputs)
        var inputs: [(what: String, path: String)] = []
        if let program = command.first,
            let path = ProgramLocator.search(program, environment: ProcessEnvironment.current())
        {
            inputs.append(("the program \(program)", path))
        }
        if options.input != "null" { inputs.append(("--input \(options.input)", options.input)) }
        try OutputChecks.notInputs(outputs, inputs: inputs)
    }

    /// Every sink, in the order each run reaches them.
    var sinks: [any LaunchRunSink] {
        let optional: [(any LaunchRunSink)?] = [report, collector, folded]
        return [progress] + optional.compactMap { $0 }
    }

    /// Where the text goes: stderr when the report is stdout's only content (`--json -`).
    var textStream: Int32 { options.jsonOnStandardOutput ? 2 : 1 }

    /// Runs the one session's pipeline: its report, or the error that stopped it. Ctrl-C keeps
    /// the runs made until then (`finish` then exits with the interruption's status).
    func run(_ pipeline: LaunchPipeline) throws -> StreamedLaunchReport {
        pipeline.finishesOnInterruption = true
        let report = try pipeline.run()[0].get()
        interruption.error = pipeline.interruption
        return report
    }

    /// After the text: where the report went, the exports, the folded stacks; then exit 1 when a
    /// run failed (`noun` names the runs), unless `--ignore-failure`.
    func finish(_ streamed: StreamedLaunchReport, failed noun: String) throws {
        if let json = options.json { Terminal.write(2, "launchprof: report written to \(json)\n") }
        if let report = collector?.report, let collector { try exports.write(report, beganAtSeconds: collector.beganAtSeconds) }
        if let folded, let path = sampling.folded {
            try ReportFiles.write(Array(folded.stacks.text.utf8), to: path)
            Terminal.write(2, "launchprof: folded stacks written to \(path)\n")
        }
        let summary = streamed.summary
        if case .interrupted(let signal) = interruption.error {
            throw ExitCause.interrupted.fail(
                "interrupted by \(RunOutcome.signalName(signal)) after \(summary.runs) of \(streamed.mode.runs) \(noun); "
                    + "the outputs hold those")
        }
        if summary.failedRuns > 0 && !options.ignoreFailure {
            Terminal.write(2, "launchprof: \(summary.failedRuns) of \(summary.runs) \(noun) failed\n")
            throw ExitCause.failed.code
        }
    }
}
