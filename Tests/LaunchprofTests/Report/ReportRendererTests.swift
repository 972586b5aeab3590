import Foundation
@testable import LaunchprofReport
@testable import LaunchprofRenderers
import Testing

@Suite("Report renderers")
struct ReportRendererTests {
    @Test("the waterfall lists every phase with its median and share of the time to first frame")
    func waterfall() throws {
        let report = try ReportSamples.report()
        let text = try TextWaterfallRenderer(colour: false).render(report)
        #expect(!text.contains("\u{1B}["))
        let lines = text.split(separator: "\n").map(String.init)
        let firstFrame = try #require(report.summary.timeToFirstFrameNs?.median)
        for phase in report.summary.phases where phase.durationNs.median > 0 {
            let label = phase.object.map { "\(phase.name) \($0.split(separator: "/").last!)" }
                ?? phase.task.map { "\(phase.name) \($0)" } ?? phase.name
            let line = try #require(lines.first { $0.hasPrefix(label + " ") }, "no line for \(label)")
            // Share computed here, independently, to one decimal place at most.
            let share = Double(phase.durationNs.median) * 100 / Double(firstFrame)
            let shown = try #require(line.split(separator: " ").first { $0.hasSuffix("%") })
            let value = try #require(Double(shown.dropLast()))
            #expect(abs(value - share) <= 0.051 + share * 0.005, "\(label): \(shown) vs \(share)")
        }
        #expect(text.contains("time to first frame"))
        #expect(text.contains("/opt/demo/app --fast a b: 3 runs"))
    }

    @Test("colour only when asked")
    func colour() throws {
        let text = try TextWaterfallRenderer(colour: true).render(try ReportSamples.report())
        #expect(text.contains("\u{1B}["))
    }

    @Test("absent phases and warnings of the runs held are listed")
    func absentAndWarnings() throws {
        var report = try ReportSamples.report(runs: 1)
        report.runs[0].absent = [AbsentPhase(phase: "loader.map", reason: "statically linked")]
        report.runs[0].warnings = [TimelineWarning(.duplicateFirstFrame, "first-frame was sent 2 times")]
        let text = try TextWaterfallRenderer().render(report)
        #expect(text.contains("loader.map: statically linked"))
        #expect(text.contains("first-frame was sent 2 times"))
    }

    @Test("the JSON renderer gives the writer's bytes")
    func json() throws {
        let report = try ReportSamples.report()
        let text = try JSONReportRenderer().render(report)
        #expect(Array(text.utf8) == (try LaunchReportWriter.encode(report)))
        try SchemaValidator.expectValid(text.utf8, against: .launchReport, "rendered JSON")
    }

    @Test("golden: a small report's JSON, byte for byte")
    func golden() throws {
        let report = try ReportSamples.report(runs: 2)
        let actual = try LaunchReportWriter.encode(report)
        try SchemaValidator.expectValid(actual, against: .launchReport, "golden report")
        let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Golden/launch-report-small.json")
        let expected = try Data(contentsOf: url)
        if Array(expected) != actual {
            let dump = FileManager.default.temporaryDirectory.appendingPathComponent("launch-report-small.actual.json")
            try Data(actual).write(to: dump)
            Issue.record("golden mismatch; actual output in \(dump.path)")
        }
    }

    @Test("a metric only some runs have says in how many")
    func metricOfSomeRuns() throws {
        // Run 0 exited by itself; launchprof ended run 1 after its launch (no exitNs).
        let runs = (0..<2).map { index in
            LaunchRun(
                index: index, pid: Int32(10 + index), exitStatus: RunExit(code: 0),
                phases: [LaunchPhase(name: "exec", startNs: 0, durationNs: 1_000)],
                metrics: LaunchMetrics(timeToFirstFrameNs: 5_000, exitNs: index == 0 ? 9_000 : nil))
        }
        let report = LaunchReport(target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode, runs: runs)
        let lines = try TextWaterfallRenderer().render(report).split(separator: "\n")
        let exit = try #require(lines.first { $0.hasPrefix("exit ") && $0.contains("median") })
        #expect(exit.hasSuffix("(1 of 2 runs)"))
        let frame = try #require(lines.first { $0.hasPrefix("time to first frame") })
        #expect(!frame.contains(" of 2 runs"))
    }

    @Test("durations print with three significant digits and a unit")
    func durations() throws {
        // Expected strings derived by hand from the values.
        let report = LaunchReport(
            target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode,
            runs: [
                LaunchRun(
                    index: 0, pid: 1, exitStatus: RunExit(code: 0),
                    phases: [
                        LaunchPhase(name: "a", startNs: 0, durationNs: 812),
                        LaunchPhase(name: "b", startNs: 812, durationNs: 41_249),
                        LaunchPhase(name: "c", startNs: 42_061, durationNs: 3_455_000),
                        LaunchPhase(name: "d", startNs: 3_497_061, durationNs: 1_234_567_890),
                    ],
                    metrics: LaunchMetrics(timeToFirstFrameNs: 1_238_064_951))
            ])
        let text = try TextWaterfallRenderer().render(report)
        for expected in ["812 ns", "41.2 µs", "3.46 ms", "1.23 s"] {
            #expect(text.contains(expected), "\(expected) missing in\n\(text)")
        }
    }
}

@Suite("Waterfall folding")
struct WaterfallFoldingTests {
    @Test("beyond the row limit, the fastest objects share one row with their summed time")
    func foldsFastestObjects() throws {
        // 30 objects, object i taking (i + 1) µs; the 5 slowest keep their rows with a limit of 6.
        let phases = (0..<30).map { i in
            LaunchPhase(name: "loader.init", startNs: UInt64(i) * 100_000, durationNs: UInt64(i + 1) * 1_000, object: "/lib/lib\(i).so")
        }
        let report = LaunchReport(
            target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode,
            runs: [LaunchRun(index: 0, pid: 1, exitStatus: RunExit(code: 0), phases: phases, metrics: LaunchMetrics(timeToFirstFrameNs: 10_000_000))])
        var renderer = TextWaterfallRenderer()
        renderer.maximumObjectRows = 6
        let text = try renderer.render(report)
        let shown = (0..<30).filter { text.contains("loader.init lib\($0).so ") }
        #expect(shown == [25, 26, 27, 28, 29])
        let foldedTotal = (1...25).reduce(0, +)  // µs of objects 0...24
        let line = try #require(text.split(separator: "\n").first { $0.contains("(25 more objects)") })
        #expect(line.contains(TextWaterfallRenderer.duration(UInt64(foldedTotal) * 1_000)))
        // Under the limit, every object has its row.
        renderer.maximumObjectRows = 30
        let all = try renderer.render(report)
        #expect((0..<30).allSatisfy { all.contains("loader.init lib\($0).so ") })
        #expect(!all.contains("more objects"))
    }
}
