import Foundation
import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport
@testable import LaunchprofRenderers

@Suite("compare: verdicts from per-run samples")
struct ReportComparisonTests {
    @Test func identicalInputsAreQuietAndTheirChangeIsZero() {
        var generator = SeededGenerator(seed: 1)
        let report = BenchSamples.report(runs: 20, workNs: 8_000_000, noise: 0.2, generator: &generator)
        let comparison = ReportComparison(name: "app", base: report, new: report)
        #expect(comparison.verdict == .unchanged)
        for change in comparison.changes {
            #expect(change.verdict == .unchanged, "\(change.key)")
            #expect(change.shift?.shiftNs == 0, "\(change.key)")
            if change.baseMedianNs != 0 { #expect(change.medianChangePercent == 0, "\(change.key)") }
        }
    }

    /// A 10% slower didFinishLaunching in ±5% noise is a regression of that phase and of the
    /// first frame, not of main; the shift found is within a few percent of the truth.
    @Test func tenPercentSlowerPhaseIsARegression() throws {
        var generator = SeededGenerator(seed: 2)
        let base = BenchSamples.report(runs: 20, workNs: 8_000_000, noise: 0.05, generator: &generator)
        let new = BenchSamples.report(runs: 20, workNs: 8_800_000, noise: 0.05, generator: &generator)
        let comparison = ReportComparison(name: "app", base: base, new: new)
        #expect(comparison.verdict == .regression)
        let phase = try #require(comparison.changes.first { $0.key == "phase:didFinishLaunching" })
        #expect(phase.verdict == .regression)
        let percent = try #require(phase.shiftPercent)
        #expect(percent > 6 && percent < 14, "\(percent)")
        #expect(comparison.changes.first { $0.key == "timeToMainNs" }?.verdict == .unchanged)
        #expect(comparison.changes.first { $0.key == "timeToFirstFrameNs" }?.verdict == .regression)
        // The other way round, it is an improvement.
        let reverse = ReportComparison(name: "app", base: new, new: base)
        #expect(reverse.verdict == .improvement)
    }

    /// A real shift below the minimum effect is left alone; raising the limit per quantity
    /// (a suite's maxRegressionPercent) does the same for a larger one.
    @Test func minimumEffectKeepsSmallChangesQuiet() {
        var generator = SeededGenerator(seed: 3)
        let base = BenchSamples.report(runs: 30, workNs: 8_000_000, noise: 0.01, generator: &generator)
        let new = BenchSamples.report(runs: 30, workNs: 8_200_000, noise: 0.01, generator: &generator)
        let quiet = ReportComparison(name: "app", base: base, new: new)
        let phase = quiet.changes.first { $0.key == "phase:didFinishLaunching" }
        #expect(phase?.shift.map { $0.lowerNs > 0 } == true, "the 2.5% shift is real…")
        #expect(phase?.verdict == .unchanged, "…but under the 5% minimum")
        #expect(quiet.verdict == .unchanged)
        let tight = ReportComparison(name: "app", base: base, new: new, settings: .init(minEffectPercent: 1))
        #expect(tight.verdict == .regression)
        let slower = BenchSamples.report(runs: 30, workNs: 9_600_000, noise: 0.01, generator: &generator)
        let lenient = ComparisonSettings(thresholds: [
            "phase:didFinishLaunching": .init(maxRegressionPercent: 25),
            "timeToFirstFrameNs": .init(maxRegressionPercent: 25), "extendedLaunchNs": .init(maxRegressionPercent: 25),
            "exitNs": .init(maxRegressionPercent: 25),
        ])
        #expect(ReportComparison(name: "app", base: base, new: slower, settings: lenient).verdict == .unchanged)
        #expect(ReportComparison(name: "app", base: base, new: slower).verdict == .regression)
    }

    /// Three runs a side cannot make a 95% interval: however clear the change, no verdict.
    @Test func tooFewRunsGiveNoVerdict() throws {
        var generator = SeededGenerator(seed: 6)
        let base = BenchSamples.report(runs: 3, workNs: 8_000_000, noise: 0.01, generator: &generator)
        let new = BenchSamples.report(runs: 3, workNs: 16_000_000, noise: 0.01, generator: &generator)
        let comparison = ReportComparison(name: "app", base: base, new: new)
        #expect(comparison.verdict == .noVerdict)
        let phase = try #require(comparison.changes.first { $0.key == "phase:didFinishLaunching" })
        #expect(phase.verdict == .noVerdict)
        #expect(phase.reason?.contains("too few runs") == true)
        // The interval it could compute is kept, with its real confidence (1 − 2/C(6,3) = 90%).
        let shift = try #require(phase.shift)
        #expect(abs(shift.confidence - 0.9) < 1e-9)
        #expect(phase.reason?.contains("90") == true, "\(phase.reason ?? "")")
        let more = BenchSamples.report(runs: 5, workNs: 16_000_000, noise: 0.01, generator: &generator)
        #expect(ReportComparison(name: "app", base: BenchSamples.report(runs: 5, workNs: 8_000_000, noise: 0.01, generator: &generator), new: more).verdict == .regression)
    }

    /// The extended launch's tasks explain its metric: a task that moved while the metric did
    /// not is shown with its verdict and decides only where the suite sets a limit on it; a
    /// phase of the launch itself decides.
    @Test func extendedLaunchTasksExplainTheirMetric() throws {
        var generator = SeededGenerator(seed: 11)
        let base = BenchSamples.report(runs: 20, workNs: 8_000_000, noise: 0.01, generator: &generator)
        var new = BenchSamples.report(runs: 20, workNs: 8_000_000, noise: 0.01, generator: &generator)
        var withTask = base
        for run in withTask.runs.indices {
            withTask.runs[run].phases.append(LaunchPhase(name: LaunchPhase.extendedLaunch, startNs: 9_000_000, durationNs: 4_000_000 + UInt64(run) * 1000, task: "sync"))
        }
        for run in new.runs.indices {
            new.runs[run].phases.append(LaunchPhase(name: LaunchPhase.extendedLaunch, startNs: 9_000_000, durationNs: 6_000_000 + UInt64(run) * 1000, task: "sync"))
        }
        let comparison = ReportComparison(name: "app", base: withTask, new: new)
        let task = try #require(comparison.changes.first { $0.key.hasPrefix("phase:extendedLaunch") })
        #expect(task.verdict == .regression)
        #expect(comparison.verdict == .unchanged, "\(comparison.changes.map { "\($0.key) \($0.verdict)" })")
        let limited = ReportComparison(
            name: "app", base: withTask, new: new, settings: .init(thresholds: [task.key: .init(maxRegressionPercent: 5)]))
        #expect(limited.verdict == .regression)
        // didFinishLaunching 25% longer, the metrics kept: the phase decides.
        var slowerPhase = new
        for run in slowerPhase.runs.indices {
            for phase in slowerPhase.runs[run].phases.indices where slowerPhase.runs[run].phases[phase].name == "didFinishLaunching" {
                slowerPhase.runs[run].phases[phase].durationNs += 2_000_000
            }
        }
        #expect(ReportComparison(name: "app", base: withTask, new: slowerPhase).verdict == .regression)
    }

    @Test func limitsCountsAndFailuresDecide() throws {
        var generator = SeededGenerator(seed: 4)
        let report = BenchSamples.report(runs: 5, workNs: 8_000_000, noise: 0.01, generator: &generator)
        // A median over its limit is a regression without any baseline.
        let limited = ReportComparison(
            name: "app", base: nil, new: report,
            settings: .init(thresholds: ["timeToFirstFrameNs": .init(maxMedianNs: 5_000_000)]))
        #expect(limited.verdict == .regression)
        let reason = try #require(limited.changes.first { $0.key == "timeToFirstFrameNs" }?.reason)
        #expect(reason.contains("over the limit 5.00 ms"), "\(reason)")
        #expect(ReportComparison(name: "app", base: nil, new: report).verdict == .unchanged)
        // Counts compare exactly: one more relocation is a regression, one fewer object an improvement.
        let counts = LaunchCounts(objects: 5, relocations: 1_200, initializers: 3)
        var more = counts
        more.relocations += 1
        #expect(ReportComparison(name: "app", base: report, new: report, baseCounts: counts, newCounts: more).verdict == .regression)
        var fewer = counts
        fewer.objects -= 1
        let improved = ReportComparison(name: "app", base: report, new: report, baseCounts: counts, newCounts: fewer)
        #expect(improved.verdict == .improvement)
        #expect(improved.counts.map(\.verdict) == [.improvement, .unchanged, .unchanged])
        // A failed run wins over everything: exit 1.
        var failed = report
        failed.runs.append(BenchSamples.run(5, frameNs: 9_000_000, workNs: 8_000_000, failed: true))
        failed = LaunchReport(target: failed.target, host: failed.host, mode: failed.mode, runs: failed.runs)
        let failure = ReportComparison(name: "app", base: report, new: failed, baseCounts: counts, newCounts: more)
        #expect(failure.verdict == .failed)
    }

    @Test func renderersShowTheVerdictAndTheInterval() throws {
        var generator = SeededGenerator(seed: 5)
        let base = BenchSamples.report(runs: 20, workNs: 8_000_000, noise: 0.02, generator: &generator)
        let new = BenchSamples.report(runs: 20, workNs: 12_000_000, noise: 0.02, generator: &generator)
        let suite = SuiteComparison(entries: [ReportComparison(name: "app|x", base: base, new: new)], missing: ["gone"])
        let text = try ComparisonTextRenderer().render(suite)
        #expect(text.contains("phase:didFinishLaunching"))
        #expect(text.contains("regression"))
        #expect(text.contains("gone: in the baseline only"))
        #expect(text.hasSuffix("verdict: regression\n"))
        let markdown = try ComparisonMarkdownRenderer().render(suite)
        #expect(markdown.hasPrefix("## launchprof: Launch-time regression"))
        #expect(markdown.contains("### app\\|x"))
        #expect(markdown.contains("| `phase:didFinishLaunching` |"))
        let json = try ComparisonJSONRenderer().render(suite)
        try SchemaValidator.expectValid(Array(json.utf8), against: .comparison, "rendered comparison")
        let decoded = try JSONDecoder().decode(SuiteComparison.self, from: Data(json.utf8))
        #expect(decoded == suite)
    }

    /// `bench` without `--baseline` compared nothing: it is "within thresholds", never
    /// "unchanged", in the text and the markdown.
    @Test func withoutABaselineNothingReadsUnchanged() throws {
        var generator = SeededGenerator(seed: 7)
        let new = BenchSamples.report(runs: 20, workNs: 12_000_000, noise: 0.02, generator: &generator)
        let suite = SuiteComparison(entries: [ReportComparison(name: "app", base: nil, new: new)])
        #expect(suite.verdict == .unchanged)
        let text = try ComparisonTextRenderer().render(suite)
        #expect(text.contains("app (warm, 20 runs, no baseline): within thresholds (no baseline)"), "\(text)")
        #expect(text.hasSuffix("verdict: within thresholds (no baseline)\n"), "\(text)")
        // Each quantity too: nothing was compared, so no row reads "unchanged".
        #expect(!text.contains("unchanged"), "\(text)")
        #expect(text.contains("no baseline\n"), "\(text)")
        #expect(try ComparisonMarkdownRenderer().render(suite).hasPrefix("## launchprof: No baseline: every launch within its thresholds"))
    }
}
