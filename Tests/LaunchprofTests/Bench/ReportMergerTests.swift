import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport

@Suite("merge: one report from many machines'")
struct ReportMergerTests {
    /// Three machines' reports merged give the summary (every median and percentile) of one
    /// report holding all their runs; runs are re-indexed and the hosts listed.
    @Test func mergeOfThreeEqualsOneReportOfAllRuns() throws {
        var generator = SeededGenerator(seed: 7)
        let hosts = ["ci-1", "ci-2", "ci-3"].map {
            LaunchReport.Host(kernel: "6.1", cpu: "cpu", cores: 2, libc: "glibc 2.36", name: $0)
        }
        let parts = [7, 12, 5].enumerated().map { index, runs in
            BenchSamples.report(runs: runs, workNs: UInt64(6_000_000 + 2_000_000 * index), noise: 0.3, generator: &generator, host: hosts[index])
        }
        let merged = try ReportMerger.merge(parts.enumerated().map { ("part\($0.offset).json", $0.element) })
        let allRuns = parts.flatMap(\.runs).enumerated().map { index, run in
            var run = run
            run.index = index
            return run
        }
        let whole = LaunchReport(target: BenchSamples.target, host: hosts[0], mode: .init(runs: 24), runs: allRuns)
        #expect(merged.summary == whole.summary)
        #expect(merged.summary.timeToFirstFrameNs?.median == whole.summary.timeToFirstFrameNs?.median)
        #expect(merged.summary.runs == 24)
        #expect(merged.runs.map(\.index) == Array(0..<24))
        #expect(merged.hosts == hosts)
        #expect(merged.mode.runs == 24)
        // The merged medians are not the median of the three medians.
        let medians = parts.compactMap { $0.summary.timeToFirstFrameNs?.median }.sorted()
        #expect(merged.summary.timeToFirstFrameNs?.median != medians[1])
        // It survives the writer and the decoder.
        let bytes = try LaunchReportWriter.encode(merged)
        try SchemaValidator.expectValid(bytes, against: .launchReport, "merged report")
        #expect(try LaunchReportDecoder.decode(bytes, path: "merged.json") == merged)
    }

    @Test func differentBuildsAndModesAreRefused() throws {
        var generator = SeededGenerator(seed: 8)
        let a = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator)
        var other = BenchSamples.target
        other.buildID = "11ee11ee"
        let b = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator, target: other)
        #expect(throws: LaunchReportError.self) { try ReportMerger.merge([("a.json", a), ("b.json", b)]) }
        do {
            _ = try ReportMerger.merge([("a.json", a), ("b.json", b)])
        } catch {
            #expect(error.description.contains("build 11ee11ee"), "\(error)")
        }
        // Same build-id at another path (another machine's checkout) merges.
        var moved = BenchSamples.target
        moved.path = "/home/ci/app"
        let c = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator, target: moved)
        #expect(try ReportMerger.merge([("a.json", a), ("c.json", c)]).summary.runs == 6)
        let cold = BenchSamples.report(runs: 3, workNs: 1_000_000, noise: 0.1, generator: &generator, cold: true)
        #expect(throws: LaunchReportError.self) { try ReportMerger.merge([("a.json", a), ("cold.json", cold)]) }
        #expect(throws: LaunchReportError.self) { try ReportMerger.merge([]) }
    }
}
