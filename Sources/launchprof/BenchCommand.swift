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

/// `launchprof bench SUITE`: a suite of launches, one report each, compared with a baseline.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a suite of launches, write a report per launch, and compare with a baseline.",
        discussion: """
            SUITE is a JSON file (version 1; see README "Launch regressions in CI"). Writes <name>.json per \
            launch and suite.json into --output; with --metrickit DIR, each launch's MetricKit \
            payloads into DIR/<name>/. With --baseline, each launch is compared with \
            the baseline folder's launch of the same name (as `launchprof compare` does); \
            without, only the suite's maxMedianNs limits apply.

            Exit status: 0 no regression; 2 a regression (or a limit exceeded); 4 only \
            improvements; 1 a launch failed; 64 usage error or invalid suite; 66 the suite or \
            the baseline cannot be read; 73 the folder cannot be written; 130 interrupted.
            """)

    @Argument(help: "The suite file (JSON).")
    var suite: String

    @Option(name: [.short, .long], help: "The folder for the reports.")
    var output = "Reports/bench"

    @Option(help: "A bench folder to compare with (e.g. the main branch's).")
    var baseline: String?

    @Option(help: "Also write the comparison as Markdown to this file (for a CI job to post).")
    var markdown: String?

    @Option(help: "Rounds the launches take turns in: each round makes its share of every launch's runs (put a base and a new build in one suite and compare their reports).")
    var rounds = 1

    @OptionGroup var options: ComparisonOptions

    @OptionGroup(title: "MetricKit") var metricKit: MetricKitOptions

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1.") }
    }

    func run() throws {
        let parsed: BenchSuite
        do {
            parsed = try BenchSuite.parse(try ReportFiles.read(suite), path: suite)
        } catch let error as BenchError {
            throw Terminal.fail(error.description, status: 64)
        } catch let error as LaunchReportError {
            throw Terminal.fail(error.description, status: 66)
        }
        // The baseline is read before any launch: a missing one should not cost the whole suite.
        var base: BenchFolder?
        if let baseline {
            do throws(LaunchReportError) {
                base = try BenchFolder.load(baseline)
            } catch {
                throw Terminal.fail(error.description, status: 66)
            }
            guard base?.isFolder == true else {
                throw Terminal.fail("--baseline \(baseline): expected a bench folder (with suite.json).", status: 64)
            }
        }
        let interactive = Terminal.isInteractive(2)
        let beganAtSeconds = Int64(time(nil))
        let runner = BenchRunner(
            suite: parsed, outputDirectory: output, inheritedEnvironment: ProcessInfo.processInfo.environment)
        let outcomes: [BenchRunner.Outcome]
        do throws(RunError) {
            outcomes = try runner.run(rounds: rounds, progress: { name, done, total in
                if interactive { Terminal.write(2, "\r\u{1b}[Klaunchprof: \(name) run \(done)/\(total)") }
            }).outcomes
            if interactive { Terminal.write(2, "\r\u{1b}[K") }
        } catch {
            if interactive { Terminal.write(2, "\n") }
            throw Terminal.fail(error.description, status: RunCommand.exitStatus(for: error))
        }
        for outcome in outcomes {
            if let error = outcome.entry.error {
                Terminal.write(2, "launchprof: \(outcome.entry.name): \(error)\n")
            } else if outcome.entry.failedRuns > 0 {
                Terminal.write(2, "launchprof: \(outcome.entry.name): \(outcome.entry.failedRuns) of \(outcome.entry.runs) runs failed\n")
            }
        }
        if let directory = metricKit.metrickit {
            do throws(LaunchReportError) {
                try ReportFiles.makeDirectory(directory)
                for outcome in outcomes {
                    guard let report = outcome.report else { continue }
                    try metricKit.write(
                        report, into: directory + "/" + outcome.entry.name, beganAtSeconds: beganAtSeconds,
                        endedAtSeconds: Int64(time(nil)))
                }
            } catch {
                throw Terminal.fail(error.description, status: 73)
            }
            Terminal.write(2, "launchprof: MetricKit payloads written to \(directory)/<launch>/\n")
        }
        let new = BenchFolder(directory: output, outcomes: outcomes, settings: parsed.settings)
        let comparison = BenchFolder.compare(base: base, new: new, settings: options.settings(over: parsed.settings))
        if let markdown {
            do throws(LaunchReportError) {
                let text = try ComparisonMarkdownRenderer().render(comparison)
                try ReportFiles.write(Array(text.utf8), to: markdown)
            } catch {
                throw Terminal.fail(error.description, status: 73)
            }
        }
        Terminal.write(2, "launchprof: reports written to \(output)/\n")
        try CompareCommand.emit(comparison, with: options.renderer())
    }
}
