import ArgumentParser
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

/// `launchprof bench SUITE`: a suite of launches, one report each, compared with a baseline.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a suite of launches, write a report per launch, and compare with a baseline.",
        discussion: """
            Examples:
              launchprof bench launches.json --baseline base --markdown summary.md
              launchprof bench both-builds.json --rounds 20

            SUITE is a JSON file (version 1; docs/ci-regressions.md in launchprof's repository). Writes <name>.json per \
            launch and suite.json into --output; with --metrickit DIR, each launch's MetricKit \
            payloads into DIR/<name>/. With --baseline, each launch is compared with \
            the baseline folder's launch of the same name (as `launchprof compare` does); \
            without, only the suite's maxMedianNs limits apply.

            A launch the baseline lacks gets "no verdict". A threshold on a phase the launch \
            does not have is refused (exit 64, naming the phases it has) once the reports are \
            written: a typo must not turn a limit off.

            \(ExitCause.summary([.success, .failed, .regression, .improvement, .noVerdict, .usage, .badInput, .noInput, .unavailable, .cannotCreate, .ioError, .noPermission, .interrupted], [.success: "no regression", .usage: "usage error, an invalid suite, a threshold on a phase that does not exist"]))
            """)

    @Argument(help: "The suite file (JSON).")
    var suite: String

    @Option(name: [.short, .long], help: "The folder for the reports.")
    var output = "Reports/bench"

    @Option(help: "A bench folder to compare with (e.g. the main branch's).")
    var baseline: String?

    @Option(help: "Also write the comparison as Markdown to this file (for a CI job to post).")
    var markdown: String?

    @Option(help: "Rounds the launches take turns in: each round makes its share of every launch's runs (put a base and a new build in one suite and compare their reports; 1 to 1000).", transform: { try OptionValue.count($0, 1...1000, unit: "the number of rounds") })
    var rounds = 1

    @OptionGroup var options: ComparisonOptions

    @OptionGroup(title: "MetricKit") var metricKit: MetricKitOptions

    func validate() throws {
        // Every output is checked before the first launch.
        try OutputChecks.folder(output, option: "--output", createParents: true)
        try OutputChecks.file(markdown, option: "--markdown")
    }

    func run() throws {
        let runner = BenchRunner(suite: try BenchSuite.parse(try ReportFiles.read(suite), path: suite), outputDirectory: output)
        try runner.refuseMissingPrograms()
        // The baseline is read before any launch: a missing one should not cost the whole suite.
        let base = try baseline.map { path in try BenchFolder.loadBaseline(path) }
        let outcomes = try runner.run(rounds: rounds) { [TerminalProgress("\($0.name) run")] }.outcomes
        for problem in outcomes.compactMap(\.problem) { Terminal.write(2, "launchprof: \(problem)\n") }
        try metricKit.write(outcomes)
        let settings = runner.suite.settings
        let comparison = BenchFolder.compare(
            base: base, new: BenchFolder(directory: output, outcomes: outcomes, settings: settings),
            settings: options.settings(over: settings))
        if let markdown { try ReportFiles.write(Array(try ComparisonMarkdownRenderer().render(comparison).utf8), to: markdown) }
        Terminal.write(2, "launchprof: reports written to \(output)/\n")
        try BenchRunner.refuseUnknownPhases(outcomes)
        try CompareCommand.emit(comparison, with: options.renderer())
    }
}
