import Foundation
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// The HTML page as text: self-contained, the report embedded safely. (That it draws is checked
/// in headless Chromium by `ReportExportCommandTests`.)
@Suite("HTML report")
struct HTMLReportRendererTests {
    @Test("one file: no external resource, the report embedded and recoverable")
    func selfContained() throws {
        var runs = [
            ExportSamples.run(index: 0, firstFrameMs: 14, hangsMs: [300], sampled: true),
            ExportSamples.run(index: 1, firstFrameMs: 9_000, optimizedMs: 20),
        ]
        // A phase name that would end the script block if it were not escaped.
        runs[0].phases.append(.init(name: "</script><script>alert(1)</script>", startNs: 1, durationNs: 1))
        let report = ExportSamples.report(runs)
        let html = try HTMLReportRenderer().render(report)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for external in ["<link", " src=", "href=", "@import", "url(", "https://", "fetch(", "XMLHttpRequest"] {
            #expect(!html.contains(external), "no \(external)")
        }
        // The only URL is the SVG namespace, which is a name, not a resource.
        #expect(html.components(separatedBy: "http://").count - 1 == html.components(separatedBy: "http://www.w3.org/2000/svg").count - 1)
        #expect(html.components(separatedBy: "</script>").count - 1 == 3, "only the three script blocks end (report, view, script)")

        let start = try #require(html.range(of: #"<script type="application/json" id="lp-report">"#))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let embedded = Data(html[start.upperBound..<end.lowerBound].utf8)
        #expect(try JSONDecoder().decode(LaunchReport.self, from: embedded) == report)
        try SchemaValidator.expectValid(embedded, against: .launchReport, "embedded report")
    }

    /// Statistics of `values` (sorted median, min, max), enough for the page.
    static func stats(_ values: [UInt64]) -> SummaryStatistics {
        let sorted = values.sorted()
        let median = sorted[(sorted.count - 1) / 2]
        return SummaryStatistics(
            count: sorted.count, min: sorted.first ?? 0, median: median, p90: sorted.last ?? 0, p99: sorted.last ?? 0,
            max: sorted.last ?? 0, mean: median, stddev: 0, outliers: 0)
    }

    static func signedStats(_ values: [Int64]) -> SignedSummaryStatistics? {
        var statistics = SignedStreamingStatistics()
        for value in values { statistics.record(value) }
        return statistics.summary
    }

    /// A `launchprof prewarm` report: prewarmed runs held 500 ms, each paired with an ordinary
    /// launch, two hazard findings and a pool.
    static func prewarmReport() -> LaunchReport {
        let ms = ExportSamples.ms
        var runs: [LaunchRun] = []
        for index in 0..<5 {
            let frozenAt = 2 * ms + UInt64(index) * 10_000
            let hold = 500 * ms
            let optimized = 6 * ms + UInt64(index) * 150_000
            var run = ExportSamples.run(index: index, firstFrameMs: 2 + 500 + 6, tasks: false)
            run.phases = [
                .init(name: "exec", startNs: 0, durationNs: 200_000),
                .init(name: "loader.map", startNs: 200_000, durationNs: 800_000),
                .init(name: "program.init", startNs: 1_000_000, durationNs: frozenAt - 1_000_000),
                .init(name: "main", startNs: frozenAt, durationNs: 0),
                .init(name: "didFinishLaunching", startNs: frozenAt + hold + 100_000, durationNs: optimized - 200_000),
                .init(name: "firstFrame", startNs: frozenAt + hold + optimized, durationNs: 0),
            ]
            run.metrics.timeToFirstFrameNs = frozenAt + hold + optimized
            run.metrics.optimizedTimeToFirstFrameNs = optimized
            var prewarm = PrewarmRun(freezeAt: "main", prewarmNs: frozenAt, holdNs: hold, resumeAtNs: frozenAt + hold,
                                     frozenPSSBytes: 3_500_000)
            prewarm.ordinaryTimeToFirstFrameNs = 34 * ms + UInt64(index) * 100_000
            prewarm.ordinaryTimeToMainNs = 20 * ms
            prewarm.savingNs = Int64(prewarm.ordinaryTimeToFirstFrameNs ?? 0) - Int64(optimized)
            run.prewarm = prewarm
            runs.append(run)
        }
        var report = ExportSamples.report(runs)
        var pool = PrewarmSummary.PoolSummary(
            size: 2, launches: 5, hits: 4, expired: 1, heldPSSBytes: stats([7_000_000]), refillNs: stats([2 * ms]), ttlNs: nil)
        pool.ttlNs = 60_000 * ms
        report.summary.prewarm = PrewarmSummary(
            savingNs: Self.signedStats(runs.compactMap { $0.prewarm?.savingNs }), losses: runs.filter { ($0.prewarm?.savingNs ?? 0) < 0 }.count,
            prewarmNs: stats(runs.compactMap { $0.prewarm?.prewarmNs }), holdNs: stats(runs.compactMap { $0.prewarm?.holdNs }),
            ordinaryTimeToFirstFrameNs: stats(runs.compactMap { $0.prewarm?.ordinaryTimeToFirstFrameNs }),
            frozenPSSBytes: stats([3_500_000]),
            hazards: [
                PrewarmHazard(kind: .wallClock, syscall: "clock_gettime", detail: "CLOCK_REALTIME", object: "app", function: "stamp_start"),
                PrewarmHazard(kind: .randomness, syscall: "getrandom", detail: "16 bytes", object: "libc.so.6", function: "malloc"),
            ],
            prewarmSafe: false, pool: pool)
        report.summary.prewarm?.ordinaryTimeToMainNs = stats(runs.compactMap { $0.prewarm?.ordinaryTimeToMainNs })
        return report
    }

    /// The x positions and values (ms) of a chart's axis tick labels, from the page's DOM.
    static func ticks(_ page: HeadlessChromium.Page, chart: String) throws -> [(x: Double, ms: Double)] {
        let start = try #require(page.dom.range(of: #"data-chart="\#(chart)""#))
        let end = try #require(page.dom.range(of: "</svg>", range: start.upperBound..<page.dom.endIndex))
        let svg = page.dom[start.upperBound..<end.lowerBound]
        return svg.matches(of: /<text class="axis" x="([0-9.]+)" y="12" text-anchor="middle">([0-9.]+) (ms|s)</).compactMap { match in
            guard let x = Double(match.output.1), let value = Double(match.output.2) else { return nil }
            return (x, match.output.3 == "s" ? value * 1_000 : value)
        }
    }

    @Test("prewarm page: ordinary and prewarmed side by side, the hold as a break, hazards with severity, the pool")
    func prewarmPage() throws {
        let report = Self.prewarmReport()
        var html = try HTMLReportRenderer().render(report)
        // The severity and why a newer report carries: the page reads them when present.
        html = html.replacingOccurrences(
            of: #""kind":"randomness""#, with: #""kind":"randomness","severity":"note","why":"a spawned process draws its own seed""#)
        let page = try Self.load(html, screenshot: "prewarm-page")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        // Both kinds of launch, counted from the report: five paired ordinary launches.
        #expect(page.dom.contains("ordinary (5)") && page.dom.contains("prewarmed (5)"))
        #expect(!page.dom.contains("ordinary (0)"))
        #expect(page.count(class: "run-dot") == 15, "5 ordinary in the time-to-first-frame strip, 5 + 5 compared")
        // The hold is a break (one per chart that spans it), labelled with its length.
        #expect(page.count(class: "hold-gap") >= 2)
        #expect(page.dom.contains("hold 500 ms"))
        // The prewarmed launch's resume → first frame is drawn wide, not a sliver of a 500 ms axis.
        let headline = try #require(page.dom.firstMatch(of: /id="lp-prewarm-headline">([^<]*)</)?.output.1)
        #expect(headline.contains("ordinary 34.2 ms") && headline.contains("prewarmed 6.30 ms"), "\(headline)")
        // Hazards, the note after the hazard, with its why; the pool.
        #expect(page.dom.contains("Not prewarm-safe: 1 hazard before the freeze."))
        #expect(page.count(class: "severity-hazard") == 1 && page.count(class: "severity-note") == 1)
        #expect(page.dom.contains("a spawned process draws its own seed"))
        #expect(page.dom.contains(#"id="lp-pool""#) && page.dom.contains("4 (80.0%)"))
        // Nothing collides: no two labels of a chart overlap (the hold's and a tick's were).
        #expect(page.bodyAttribute("data-label-overlaps") == "0", "\(page.bodyAttribute("data-overlap-pairs") ?? "")")
        // The axis tells the truth across the break: ticks after it are times from the spawn,
        // the hold included, as the bars' labels are; the first frame sits where its time is.
        let ticks = try Self.ticks(page, chart: "waterfall")
        let hold = Double(try #require(report.summary.prewarm?.holdNs?.median)) / 1e6
        let freeze = Double(try #require(report.summary.prewarm?.prewarmNs?.median)) / 1e6
        let after = ticks.filter { $0.ms > freeze + 1 }
        #expect(after.count >= 2 && after.allSatisfy { $0.ms >= freeze + hold }, "ticks after the break: \(ticks)")
        let frame = Double(try #require(report.summary.phases.first { $0.name == "firstFrame" }?.startNs.median)) / 1e6
        let line = try #require(page.dom.firstMatch(of: /<line class="instant" x1="([0-9.]+)"[^>]*><title>firstFrame at/)?.output.1)
        let (a, b) = (after[0], after[after.count - 1])
        let expected = a.x + (frame - a.ms) / (b.ms - a.ms) * (b.x - a.x)
        #expect(abs((Double(line) ?? 0) - expected) < 1, "firstFrame at \(frame) ms drawn at x \(line), the ticks say \(expected)")
    }

    /// A loss is a loss on the page: the headline says prewarming lost, the saving row is negative.
    @Test("prewarm page: a median loss is said as one")
    func prewarmLoss() throws {
        var report = Self.prewarmReport()
        for index in report.runs.indices {
            let optimized = Int64(report.runs[index].metrics.optimizedTimeToFirstFrameNs ?? 0)
            report.runs[index].prewarm?.ordinaryTimeToFirstFrameNs = 5 * ExportSamples.ms
            report.runs[index].prewarm?.savingNs = Int64(5 * ExportSamples.ms) - optimized
        }
        report.summary.prewarm?.savingNs = Self.signedStats(report.runs.compactMap { $0.prewarm?.savingNs })
        report.summary.prewarm?.losses = 5
        report.summary.prewarm?.ordinaryTimeToFirstFrameNs = Self.stats(report.runs.map { _ in 5 * ExportSamples.ms })
        let page = try Self.load(try HTMLReportRenderer().render(report), screenshot: "prewarm-page-loss")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        let headline = try #require(page.dom.firstMatch(of: /id="lp-prewarm-headline">([^<]*)</)?.output.1)
        #expect(headline.contains("prewarming loses 1.30 ms per launch (5 of 5 pairs slower prewarmed)"), "\(headline)")
        #expect(page.dom.contains(">-1.30 ms<"), "the saving's median, negative")
    }

    /// A crashed run's page: the crash stack frame by frame, the other warnings and the phases
    /// not measured, each once with the runs it came from, as the JSON has them.
    @Test("crash page: the crash stack, the warnings and what was not measured")
    func crashPage() throws {
        var runs = (0..<3).map { ExportSamples.run(index: $0, firstFrameMs: 15, tasks: false) }
        for index in runs.indices {
            runs[index].phases = runs[index].phases.filter { $0.startNs < 1_000_000 }
            runs[index].metrics = LaunchMetrics(exitNs: 1_500_000)
            runs[index].outcome = RunOutcome(kind: .crashed, signal: "SIGSEGV", signalNumber: 11)
            runs[index].absent = [AbsentPhase(phase: "main", reason: "the process was killed by signal 11 (SIGSEGV) before main")]
            runs[index].warnings = [TimelineWarning.crashStack(["crash_here (app+0x1522)", "__libc_start_main (libc.so.6+0x27376)", "_start (app+0x10f1)"])]
        }
        runs[1].warnings.append(TimelineWarning(.processesLeftBehind, "the child left 1 process(es) running (pid 42); launchprof killed them"))
        let page = try Self.load(try HTMLReportRenderer().render(ExportSamples.report(runs)), screenshot: "crash-page")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.dom.contains("3 crashed (SIGSEGV)"))
        let stack = try #require(page.dom.firstMatch(of: /<ol class="crash-stack">(.*?)<\/ol>/)?.output.1)
        #expect(stack.matches(of: /<li>/).count == 3 && stack.contains("<li>crash_here (app+0x1522)</li>"), "\(stack)")
        #expect(page.dom.contains("— every run"))
        #expect(page.dom.contains("the child left 1 process(es) running (pid 42); launchprof killed them"))
        #expect(page.dom.contains("1 of 3 runs (run 1)"))
        #expect(page.dom.contains("<b>main</b>: the process was killed by signal 11 (SIGSEGV) before main"))
        #expect(page.bodyAttribute("data-label-overlaps") == "0", "\(page.bodyAttribute("data-overlap-pairs") ?? "")")
    }

    @Test("run page: flags with their path, the flame graph, histogram ticks that differ")
    func runPage() throws {
        var runs = (0..<30).map { index in
            ExportSamples.run(index: index, firstFrameMs: 15, tasks: false, hangsMs: index == 3 ? [300] : [], sampled: index < 4)
        }
        // First frames 15.80–15.95 ms: a narrow spread whose ticks need two decimals.
        for index in runs.indices { runs[index].metrics.timeToFirstFrameNs = 15_800_000 + UInt64(index) * 5_000 }
        var html = try HTMLReportRenderer().render(ExportSamples.report(runs))
        // A flag's `path` (owner → innermost), as a newer report carries it.
        html = html.replacingOccurrences(of: #""function":"syncDatabase""#, with: #""function":"syncDatabase","path":["loadCatalog","syncDatabase","fsync_wrapper"]"#)
        let page = try Self.load(html, screenshot: "run-page")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.dom.contains("loadCatalog</b> → syncDatabase → fsync_wrapper"))
        #expect(page.count(class: "flag-row") == 1)
        #expect(page.count(class: "flame-frame") >= 4)
        let ticks = page.dom.matches(of: /class="axis hist-tick"[^>]*>([^<]*)</).map { String($0.output.1) }
        #expect(ticks.count >= 3)
        #expect(Set(ticks).count == ticks.count, "tick labels differ: \(ticks)")
    }

    /// Launches that all took the same time: the histogram is read at 1% of it around the value,
    /// not in nanosecond bins whose ticks read "15.000000 ms", "15.000001 ms".
    @Test("run page: identical launch times get a histogram around them, in readable ticks")
    func identicalLaunchTimes() throws {
        let runs = (0..<10).map { ExportSamples.run(index: $0, firstFrameMs: 15, tasks: false, hangsMs: [], sampled: false) }
        #expect(runs.allSatisfy { $0.metrics.timeToFirstFrameNs == 15_000_000 })
        let html = try HTMLReportRenderer().render(ExportSamples.report(runs))
        let page = try Self.load(html, screenshot: "run-page-identical")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        let ticks = page.dom.matches(of: /class="axis hist-tick"[^>]*>([0-9.]+) ms</).map { String($0.output.1) }
        let values = ticks.compactMap(Double.init)
        #expect(values.count >= 3 && values.count == ticks.count, "\(ticks)")
        #expect(Set(ticks).count == ticks.count, "tick labels differ: \(ticks)")
        #expect(ticks.allSatisfy { ($0.split(separator: ".").last?.count ?? 0) <= 2 }, "at most 2 decimals: \(ticks)")
        #expect((values.first ?? 99) < 15 && (values.last ?? 0) > 15, "the value inside the axis: \(ticks)")
        // One bar holds all ten launches, with empty bins on both sides of it.
        let counts = page.dom.matches(of: /class="hist-bar" data-count="([0-9]+)"/).compactMap { Int($0.output.1) }
        #expect(counts.filter { $0 > 0 } == [10], "\(counts)")
        #expect(counts.first == 0 && counts.last == 0, "\(counts)")
    }

    /// Page faults: runs that read pages from disk are named beside the metrics (not warm).
    @Test("run page: runs that read pages from disk are named under Metrics")
    func pagesReadFromDisk() throws {
        var runs = (0..<10).map { ExportSamples.run(index: $0, firstFrameMs: 15, tasks: false, hangsMs: [], sampled: false) }
        for index in runs.indices {
            runs[index].minorFaults = 450 + UInt64(index)
            runs[index].majorFaults = index < 2 ? 4 + UInt64(index) : 0
        }
        let html = try HTMLReportRenderer().render(ExportSamples.report(runs))
        let page = try Self.load(html, screenshot: "run-page-faults")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.dom.contains("2 of 10 runs read 9 page(s) from disk (major faults): not warm launches"), "\(page.dom.prefix(2_000))")
    }

    /// `html` loaded in headless Chromium from a temporary file (removed after), its screenshot
    /// kept as a test artifact named `screenshot`.png.
    static func load(_ html: String, screenshot: String) throws -> HeadlessChromium.Page {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lp-\(screenshot)-\(UUID().uuidString).html")
        try HeadlessChromium.withOverlapCheck(html).write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try HeadlessChromium.load(file.path, screenshot: try HeadlessChromium.artifactPath(screenshot + ".png"))
    }
}
