import ArgumentParser
import LaunchprofCore
import LaunchprofReport

/// `launchprof compare BASE NEW`: did the launch get slower, with what confidence.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two launch reports (or two bench folders): per metric and phase, the change and its confidence interval.",
        discussion: """
            The shift is the Hodges–Lehmann estimate over the per-run samples, with the \
            interval of the Mann–Whitney test. A change counts when the interval excludes zero \
            and the shift is at least the minimum effect (in percent of the base median and in \
            ns). Bench folders also compare inspect's counts (objects, relocations, \
            initializers) exactly, and apply the suite's thresholds.

            Exit status: 0 no change; 2 a regression; 4 only improvements; 1 a launch in NEW \
            failed; 64 usage error; 66 a report cannot be read or is of an unknown schema version.
            """)

    @Argument(help: "The baseline: a LaunchReport JSON file or a bench folder.")
    var base: String

    @Argument(help: "The new measurement, of the same kind as BASE.")
    var new: String

    @OptionGroup var options: ComparisonOptions

    func run() throws {
        let baseSide: BenchFolder
        let newSide: BenchFolder
        do throws(LaunchReportError) {
            baseSide = try BenchFolder.load(base)
            newSide = try BenchFolder.load(new)
        } catch {
            throw Terminal.fail(error.description, status: 66)
        }
        guard baseSide.isFolder == newSide.isFolder else {
            throw Terminal.fail("compare two reports or two bench folders, not one of each ('\(base)', '\(new)').", status: 64)
        }
        let comparison = BenchFolder.compare(
            base: baseSide, new: newSide, settings: options.settings(over: newSide.settings))
        try Self.emit(comparison, with: options.renderer())
    }

    /// Prints the comparison and exits with its verdict's code.
    static func emit(_ comparison: SuiteComparison, with renderer: any ComparisonRenderer) throws {
        do throws(LaunchReportError) {
            Terminal.write(1, try renderer.render(comparison))
        } catch {
            throw Terminal.fail(error.description, status: 70)
        }
        let code = comparison.verdict.exitCode
        if code != 0 { throw ExitCode(code) }
    }
}
