import Foundation
import Testing

@testable import LaunchprofReport
@testable import LaunchprofRenderers

/// The waterfall names the observer and shows launchprof's own cost inside each phase.
@Suite("Waterfall: the observer and its cost")
struct ObserverColumnTests {
    @Test func headerNamesTheObserverAndTheCostColumnMarksPhasesMostlyLaunchprof() throws {
        let sample = try ReportSamples.report()
        var mode = sample.mode
        mode.observer = "uprobe"
        mode.observerReason = "auto: perf events permitted and the uprobe PMU present"
        // Each run's first span: launchprof is 3/4 of it; its second: 1/10.
        let runs = sample.runs.map { run -> LaunchRun in
            var run = run
            let spans = run.phases.indices.filter { run.phases[$0].durationNs > 0 }
            if let first = spans.first { run.phases[first].observerNs = run.phases[first].durationNs * 3 / 4 }
            if spans.count > 1 { run.phases[spans[1]].observerNs = run.phases[spans[1]].durationNs / 10 }
            return run
        }
        let report = LaunchReport(target: sample.target, host: sample.host, mode: mode, runs: runs)
        let text = try TextWaterfallRenderer(colour: false).render(report)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasSuffix(", observer uprobe (auto: perf events permitted and the uprobe PMU present)") == true)
        #expect(lines.contains { $0.hasPrefix("phase") && $0.hasSuffix("launchprof") })
        let spans = report.summary.phases.filter { $0.durationNs.median > 0 && $0.observerNs != nil }
        try #require(spans.count >= 2)
        func line(_ phase: PhaseSummary) throws -> String {
            try #require(lines.first { $0.hasPrefix(PhaseStyle.label(phase) + " ") })
        }
        let mostly = try line(spans[0])
        let little = try line(spans[1])
        #expect(mostly.contains(TextWaterfallRenderer.duration(spans[0].observerNs?.median ?? 0) + "*"), "\(mostly)")
        #expect(little.contains(TextWaterfallRenderer.duration(spans[1].observerNs?.median ?? 0) + " "), "\(little)")
        #expect(!little.contains("*"))
    }

    @Test func reportsWithoutObserverFiguresRenderAsBefore() throws {
        let text = try TextWaterfallRenderer(colour: false).render(try ReportSamples.report())
        #expect(!text.contains("launchprof: its own"))
        #expect(!text.contains("observer"))
    }
}
