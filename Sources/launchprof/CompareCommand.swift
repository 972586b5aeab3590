import ArgumentParser
import LaunchprofCore
import LaunchprofAnalysis
import LaunchprofReport
import LaunchprofRenderers

/// `launchprof compare BASE NEW`: did the launch get slower, with what confidence.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two launch reports (or two bench folders): per metric and phase, the change and its confidence interval.",
        discussion: """
            Examples:
              launchprof compare base.json new.json
              launchprof compare --format markdown base-bench new-bench

            The shift is the Hodges–Lehmann estimate over the per-run samples, with the \
            interval of the Mann–Whitney test. A change counts when the interval excludes zero \
            and the shift is at least the minimum effect (in percent of the base median and in \
            ns). Bench folders also compare inspect's counts (objects, relocations, \
            initializers) exactly, and apply the suite's thresholds.

            Refused (exit 65): a report with no runs, the same report on both sides, reports of \
            two different programs (neither the build-id nor the file name agree; \
            --allow-different-programs for a deliberate rename), a document that is not a launch \
            report. A quantity with too few runs for the interval asked gets "no verdict", with \
            the interval it could compute and that interval's real confidence.

            \(ExitCause.summary([.success, .failed, .regression, .improvement, .noVerdict, .usage, .badInput, .noInput, .ioError], [.success: "no change", .failed: "a launch in NEW failed"]))
            """)

    @Argument(help: "The baseline: a LaunchReport JSON file or a bench folder.")
    var base: String

    @Argument(help: "The new measurement, of the same kind as BASE.")
    var new: String

    @OptionGroup var options: ComparisonOptions

    @Flag(help: "Compare reports of programs with different names and build-ids (a renamed build).")
    var allowDifferentPrograms = false

    func run() throws {
        let baseSide = try BenchFolder.load(base)
        let newSide = try BenchFolder.load(new)
        guard baseSide.isFolder == newSide.isFolder else {
            throw ExitCause.usage.fail("compare two reports or two bench folders, not one of each ('\(base)', '\(new)').")
        }
        if !baseSide.isFolder, let baseReport = baseSide.entries.first?.report, let newReport = newSide.entries.first?.report {
            try ReportComparison.checkComparable(
                base: (base, baseReport), new: (new, newReport), allowDifferentPrograms: allowDifferentPrograms)
        }
        let comparison = BenchFolder.compare(
            base: baseSide, new: newSide, settings: options.settings(over: newSide.settings))
        try Self.emit(comparison, with: options.renderer())
    }

    /// Prints the comparison and exits with its verdict's code.
    static func emit(_ comparison: SuiteComparison, with renderer: any ComparisonRenderer) throws {
        Terminal.write(1, try renderer.render(comparison))
        let cause = ExitCause(comparison.verdict)
        if cause != .success { throw cause.code }
    }
}
