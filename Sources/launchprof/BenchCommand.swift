import ArgumentParser
import LaunchprofCore
import LaunchprofAnalysis
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

            \(ExitCause.summary([.success, .failed, .regression, .improvement, .noVerdict, .usage, .badInput, .noInput, .unavailable, .cannotCreate, .interrupted], [.success: "no regression", .usage: "usage error, an invalid suite, a threshold on a phase that does not exist"]))
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
        let parsed = try BenchSuite.parse(try ReportFiles.read(suite), path: suite)
        // A missing program is refused before any launch, with the code run and inspect give it
        // (a relative path with a folder is left to the launch: it may be relative to its cwd).
        let inherited = ProcessInfo.processInfo.environment
        for launch in parsed.launches where launch.program.hasPrefix("/") || !launch.program.contains("/") {
            do throws(RunError) {
                _ = try ProgramLocator.locate(launch.program, environment: inherited.merging(launch.environment) { $1 })
            } catch {
                if error.exitCause == .noInput { throw error.exitCause.fail("\(launch.name): \(error.description)") }
            }
        }
        // The baseline is read before any launch: a missing one should not cost the whole suite.
        var base: BenchFolder?
        if let baseline {
            base = try BenchFolder.load(baseline)
            guard base?.isFolder == true else {
                throw ExitCause.usage.fail("--baseline \(baseline): expected a bench folder (with suite.json).")
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
            throw error
        }
        for outcome in outcomes {
            if let error = outcome.entry.error {
                Terminal.write(2, "launchprof: \(outcome.entry.name): \(error)\n")
            } else if outcome.entry.failedRuns > 0 {
                Terminal.write(2, "launchprof: \(outcome.entry.name): \(outcome.entry.failedRuns) of \(outcome.entry.runs) runs failed\n")
            }
        }
        if let directory = metricKit.metrickit {
            try ReportFiles.makeDirectory(directory)
            for outcome in outcomes {
                guard let report = outcome.report else { continue }
                try metricKit.write(
                    report, into: directory + "/" + outcome.entry.name, beganAtSeconds: beganAtSeconds,
                    endedAtSeconds: Int64(time(nil)))
            }
            Terminal.write(2, "launchprof: MetricKit payloads written to \(directory)/<launch>/\n")
        }
        let new = BenchFolder(directory: output, outcomes: outcomes, settings: parsed.settings)
        let comparison = BenchFolder.compare(base: base, new: new, settings: options.settings(over: parsed.settings))
        if let markdown {
            let text = try ComparisonMarkdownRenderer().render(comparison)
            try ReportFiles.write(Array(text.utf8), to: markdown)
        }
        Terminal.write(2, "launchprof: reports written to \(output)/\n")
        try Self.refuseUnknownPhases(outcomes)
        try CompareCommand.emit(comparison, with: options.renderer())
    }

    /// A threshold on a quantity none of the launch's runs has (`phase:nosuch`) would check
    /// nothing: refused, naming what the launch has. Checked on the measured reports, because
    /// an app's hooked phases are known only once it ran.
    static func refuseUnknownPhases(_ outcomes: [BenchRunner.Outcome]) throws {
        var problems: [String] = []
        for outcome in outcomes {
            guard let report = outcome.report else { continue }
            let keys = Set(report.samples().map(\.key))
            for key in outcome.entry.thresholds.keys.sorted() where key.hasPrefix("phase:") && !keys.contains(key) {
                let phases = keys.filter { $0.hasPrefix("phase:") }.map { String($0.dropFirst(6)) }.sorted()
                problems.append(
                    "\(outcome.entry.name): a threshold on '\(key)', a phase this launch does not have; its phases: \(phases.joined(separator: ", "))")
            }
        }
        guard problems.isEmpty else {
            throw ExitCause.usage.fail(problems.joined(separator: "\nlaunchprof: "))
        }
    }
}
