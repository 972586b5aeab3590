import Foundation
import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport
@testable import LaunchprofRenderers

/// `compare` says which thread state changed, with the statistics it uses for phases, and gives
/// no verdict on states where a side has none.
@Suite("compare: which thread state changed")
struct StateComparisonTests {
    /// `count` runs whose didFinishLaunching is `runningNs` on a CPU, `runnableNs` waiting for one
    /// and `diskIONs` reading, each × (1 ± noise).
    static func report(
        runs count: Int, runningNs: UInt64, runnableNs: UInt64 = 1_000_000, diskIONs: UInt64, noise: Double = 0.05,
        states: Bool = true, generator: inout SeededGenerator
    ) -> LaunchReport {
        func vary(_ ns: UInt64) -> UInt64 { UInt64(Double(ns) * (1 + Double.random(in: -noise...noise, using: &generator))) }
        let runs = (0..<count).map { index -> LaunchRun in
            let split = ThreadStateBreakdown(runningNs: vary(runningNs), runnableNs: vary(runnableNs), diskIONs: vary(diskIONs))
            var run = BenchSamples.run(index, frameNs: 1_000_000 + split.totalNs, workNs: split.totalNs)
            guard states else { return run }
            run.phases[1].threadState = split
            var launch = split
            launch.runningNs += 1_000_000
            run.threadStates = LaunchThreadStates(mainThread: run.pid, launchEndNs: 1_000_000 + split.totalNs, launch: launch)
            return run
        }
        return LaunchReport(target: BenchSamples.target, host: BenchSamples.host, mode: .init(runs: count), runs: runs)
    }

    @Test("+18 ms of disk I/O in a phase: that state regressed, with its shift and interval; the others did not")
    func diskIOInAPhase() throws {
        var generator = SeededGenerator(seed: 34)
        let base = Self.report(runs: 20, runningNs: 8_000_000, diskIONs: 200_000, generator: &generator)
        let new = Self.report(runs: 20, runningNs: 8_000_000, diskIONs: 18_200_000, generator: &generator)
        let comparison = ReportComparison(name: "app", base: base, new: new)
        #expect(comparison.verdict == .regression)
        let disk = try #require(comparison.changes.first { $0.key == "state:diskIO/phase:didFinishLaunching" })
        #expect(disk.verdict == .regression)
        let shift = try #require(disk.shift)
        #expect(shift.shiftNs > 17_000_000 && shift.shiftNs < 19_000_000, "\(shift)")
        #expect(shift.lowerNs > 0)
        #expect(comparison.changes.first { $0.key == "state:diskIO" }?.verdict == .regression, "over the launch too")
        for key in ["state:running/phase:didFinishLaunching", "state:runnable/phase:didFinishLaunching", "state:lock/phase:didFinishLaunching"] {
            #expect(comparison.changes.first { $0.key == key }?.verdict == .unchanged, "\(key)")
        }
        let text = try ComparisonTextRenderer().render(SuiteComparison(entries: [comparison]))
        #expect(text.contains("which states changed: +17.") && text.contains("ms disk I/O in didFinishLaunching"), "\(text)")
        #expect(text.contains("disk I/O in didFinishLaunching"), "\(text)")
        #expect(!text.contains("running in didFinishLaunching"), "unchanged states stay out of the table: \(text)")
        // The state keys are quantities the comparison's schema accepts.
        let json = try ComparisonJSONRenderer().render(SuiteComparison(entries: [comparison]))
        try SchemaValidator.expectValid(Array(json.utf8), against: .comparison, "comparison with thread states")
        let markdown = try ComparisonMarkdownRenderer().render(SuiteComparison(entries: [comparison]))
        #expect(markdown.contains("which states changed: +17."), "\(markdown)")
    }

    @Test("time moving between states within an unchanged phase is reported but decides nothing")
    func statesExplainTheyDoNotGate() throws {
        var generator = SeededGenerator(seed: 35)
        let base = Self.report(runs: 20, runningNs: 8_000_000, runnableNs: 1_000_000, diskIONs: 0, noise: 0.01, generator: &generator)
        let new = Self.report(runs: 20, runningNs: 6_000_000, runnableNs: 3_000_000, diskIONs: 0, noise: 0.01, generator: &generator)
        let comparison = ReportComparison(name: "app", base: base, new: new)
        #expect(comparison.changes.first { $0.key == "state:runnable/phase:didFinishLaunching" }?.verdict == .regression)
        #expect(comparison.changes.first { $0.key == "phase:didFinishLaunching" }?.verdict == .unchanged)
        #expect(comparison.verdict == .unchanged)
        // A suite's limit on a state makes it decide.
        let limited = ReportComparison(
            name: "app", base: base, new: new,
            settings: ComparisonSettings(thresholds: ["state:runnable/phase:didFinishLaunching": .init(maxMedianNs: 2_000_000)]))
        #expect(limited.verdict == .regression)
    }

    @Test("a base without thread states: no verdict on any state, said once; the phases still decide")
    func noStatesOnOneSide() throws {
        var generator = SeededGenerator(seed: 36)
        let base = Self.report(runs: 20, runningNs: 8_000_000, diskIONs: 0, states: false, generator: &generator)
        let new = Self.report(runs: 20, runningNs: 8_000_000, diskIONs: 0, generator: &generator)
        let comparison = ReportComparison(name: "app", base: base, new: new)
        let states = comparison.changes.filter { $0.key.hasPrefix("state:") }
        #expect(!states.isEmpty && states.allSatisfy { $0.verdict == .noVerdict && $0.reason == "no thread states in the base report" })
        #expect(comparison.verdict == .unchanged)
        let text = try ComparisonTextRenderer().render(SuiteComparison(entries: [comparison]))
        #expect(text.components(separatedBy: "thread states: no verdict, no thread states in the base report").count == 2, "\(text)")
    }

    @Test("state keys name their state and phase, phase keys with objects and occurrences included")
    func keys() {
        let phase = LaunchReport.phaseKey(LaunchPhase(name: "loader.init", startNs: 0, durationNs: 1, object: "/lib/libc.so.6"), occurrence: 1)
        let key = LaunchReport.stateKey(.diskIO, phaseKey: phase)
        #expect(key == "state:diskIO/phase:loader.init[/lib/libc.so.6]#1")
        #expect(LaunchReport.stateKeyParts(key)?.state == .diskIO)
        #expect(LaunchReport.stateKeyParts(key)?.phase == "loader.init[/lib/libc.so.6]#1")
        #expect(LaunchReport.stateKeyParts("state:lock")?.phase == nil)
        #expect(LaunchReport.stateKeyParts("phase:main") == nil)
        #expect(ComparisonRows.quantity("state:diskIO/phase:loader.map") == "disk I/O in loader.map")
    }
}
