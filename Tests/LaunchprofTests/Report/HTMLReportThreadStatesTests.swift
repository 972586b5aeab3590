import Foundation
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// The HTML page's thread states (issue 34): the state bar under each phase of the waterfall, the
/// launch's bar, the slow-launch reasons, one run's causes and other threads — drawn by headless
/// Chromium and read back from its DOM against the report, and the view block Swift computes the
/// bars' shares and the names in.
@Suite("HTML report: thread states")
struct HTMLReportThreadStatesTests {
    static let ms = ExportSamples.ms

    /// ExportSamples runs with thread states: each phase split between running, sleeping, a lock and
    /// disk I/O in proportions that differ by run (so the summary's medians come from different
    /// runs); the launch; two other threads, the causes (lock holders in run 0 only); reasons that
    /// rank diskIO (3 runs), cpuBound (runs 1 and 2), lockContention (run 0).
    static func statesReport(runs count: Int = 3) -> LaunchReport {
        var runs = (0..<count).map { ExportSamples.run(index: $0, firstFrameMs: 15 + UInt64($0), tasks: false) }
        for i in runs.indices {
            let pid = runs[i].pid
            var launch = ThreadStateBreakdown()
            var covered: UInt64 = 0
            for j in runs[i].phases.indices where runs[i].phases[j].durationNs > 0 {
                let duration = runs[i].phases[j].durationNs
                let running = duration * UInt64(50 + 10 * i) / 100
                let sleeping = duration * [20, 10, 25][i % 3] / 100
                let lock = runs[i].phases[j].name == "willFinishLaunching" ? (duration - running - sleeping) / 2 : 0
                let split = ThreadStateBreakdown(
                    runningNs: running, sleepingNs: sleeping, lockNs: lock, diskIONs: duration - running - sleeping - lock)
                runs[i].phases[j].threadState = split
                for state in ThreadState.allCases { launch[state] += split[state] }
                covered += duration
            }
            let end = runs[i].metrics.timeToFirstFrameNs ?? 0
            launch.runnableNs += end - covered
            let worker = TaskName(pid: pid, process: "app", tid: pid + 1, thread: "worker")
            let xserver = TaskName(pid: 812, process: "Xvfb", tid: 812, thread: "Xvfb")
            var reasons = [
                SlowLaunchReason(
                    code: .diskIO, message: "\(DurationText.text(launch.diskIONs)) reading libfoo.so.1 from disk (cold cache)",
                    ns: launch.diskIONs, percentOfLaunch: Int(launch.diskIONs * 100 / end),
                    threshold: "≥ 10% of the launch and ≥ 1.00 ms", advice: "read the files ahead", phase: "didFinishLaunching"),
            ]
            if i > 0 {
                reasons.append(SlowLaunchReason(
                    code: .cpuBound, message: "main thread on a CPU \(launch.runningNs * 100 / end)% of the launch",
                    ns: launch.runningNs, percentOfLaunch: Int(launch.runningNs * 100 / end),
                    threshold: "≥ 50% of the launch and ≥ 1.00 ms", advice: "defer what the first frame does not need"))
            } else {
                reasons.append(SlowLaunchReason(
                    code: .lockContention, message: "\(DurationText.text(launch.lockNs)) waiting on a lock held by thread worker",
                    ns: launch.lockNs, percentOfLaunch: Int(launch.lockNs * 100 / end),
                    threshold: "≥ 10% of the launch and ≥ 1.00 ms", advice: "shorten the critical section"))
            }
            runs[i].threadStates = LaunchThreadStates(
                mainThread: pid, launchEndNs: end, launch: launch,
                threads: [
                    ThreadStateSummary(tid: pid + 1, name: "worker", startNs: 2 * ms, endNs: end,
                                       states: ThreadStateBreakdown(runningNs: 4 * ms, sleepingNs: end - 6 * ms)),
                    ThreadStateSummary(tid: pid + 2, name: "gdbus", startNs: 3 * ms, endNs: end,
                                       states: ThreadStateBreakdown(runnableNs: 1 * ms, sleepingNs: end - 4 * ms)),
                ],
                cpuCompetitors: [TaskTime(task: worker, ns: 700_000, ownProcess: true)],
                wakers: [
                    WakeCause(kind: .thread, task: xserver, state: .sleeping, ns: launch.sleepingNs / 2, count: 4),
                    WakeCause(kind: .timer, state: .sleeping, ns: launch.sleepingNs - launch.sleepingNs / 2, count: 1),
                ],
                fileReads: [FileRead(path: "/usr/lib/libfoo.so.1", waitNs: launch.diskIONs, majorFaults: 3, pagesRead: 12)],
                lockHolders: i == 0 ? [LockHolder(task: worker, ns: launch.lockNs, count: 1, ownProcess: true)] : [],
                reasons: reasons, notes: ["a note on the figures"])
        }
        return ExportSamples.report(runs)
    }

    /// One segment of a drawn state bar.
    struct Segment {
        var state: String
        var ns: UInt64
        var x: Double
        var width: Double
        var title: String
    }

    /// A drawn state bar (`<g class="state-bar">`).
    struct DrawnBar {
        var totalNs: UInt64
        var segments: [Segment]
        var x: Double { segments.first?.x ?? 0 }
        var width: Double { segments.reduce(0) { $0 + $1.width } }
    }

    /// The `<svg>` of the chart named `chart` (the first one).
    static func chart(_ page: HeadlessChromium.Page, _ chart: String) throws -> Substring {
        let start = try #require(page.dom.range(of: #"data-chart="\#(chart)""#), "no chart \(chart)")
        let end = try #require(page.dom.range(of: "</svg>", range: start.upperBound..<page.dom.endIndex))
        return page.dom[start.upperBound..<end.lowerBound]
    }

    static func bars(_ text: Substring) -> [DrawnBar] {
        text.matches(of: /<g class="state-bar" data-total-ns="(\d+)"[^>]*>(.*?)<\/g>/.dotMatchesNewlines()).map { bar in
            let segments = bar.output.2.matches(
                of: /<rect class="state state-\w+" data-state="(\w+)" data-ns="(\d+)" x="([-0-9.e]+)" y="[^"]*" width="([-0-9.e]+)"[^>]*><title>([^<]*)<\/title>/
            ).map { match in
                Segment(state: String(match.output.1), ns: UInt64(match.output.2) ?? 0, x: Double(match.output.3) ?? .nan,
                        width: Double(match.output.4) ?? .nan, title: String(match.output.5))
            }
            return DrawnBar(totalNs: UInt64(bar.output.1) ?? 0, segments: segments)
        }
    }

    /// The waterfall's phase bars, in row order: x and width.
    static func phaseRects(_ svg: Substring) -> [(x: Double, width: Double)] {
        svg.matches(of: /<rect class="phase [^"]*" x="([-0-9.e]+)" y="[^"]*" width="([-0-9.e]+)"/).map {
            (Double($0.output.1) ?? .nan, Double($0.output.2) ?? .nan)
        }
    }

    /// `breakdown`'s states with time, in `ThreadState` order: what a bar must hold.
    static func parts(_ breakdown: ThreadStateBreakdown) -> [(String, UInt64)] {
        ThreadState.allCases.filter { breakdown[$0] > 0 }.map { ($0.rawValue, breakdown[$0]) }
    }

    /// A bar drawn as its states say: one segment per state with time, in order, with its time;
    /// each segment's width its share of the bar, the segments end to end over `span` (the
    /// phase's own bar), each one's tooltip naming its state and time.
    static func expectBar(_ bar: DrawnBar, holds breakdown: ThreadStateBreakdown, over span: (x: Double, width: Double)?, _ what: String) {
        #expect(bar.segments.map { "\($0.state) \($0.ns)" } == parts(breakdown).map { "\($0.0) \($0.1)" }, "\(what)")
        #expect(bar.totalNs == breakdown.totalNs, "\(what)")
        var x = bar.x
        for segment in bar.segments {
            #expect(abs(segment.x - x) < 0.01, "\(what): \(segment.state) starts where the one before ends")
            x += segment.width
            let share = Double(segment.ns) / Double(breakdown.totalNs)
            #expect(abs(segment.width / bar.width - share) < 0.0005, "\(what): \(segment.state) is \(share) of the bar")
            let label = ThreadState(rawValue: segment.state)?.label ?? "?"
            #expect(segment.title.contains("▸ \(label) "), "\(what): tooltip \(segment.title)")
        }
        if let span {
            #expect(abs(bar.x - span.x) < 0.01 && abs(bar.width - span.width) < 0.01, "\(what): the bar spans its phase \(span)")
        }
    }

    /// The page with a script run after its own (to pick a run in a select, as a user would).
    static func load(_ html: String, screenshot: String, then script: String = "") throws -> HeadlessChromium.Page {
        var html = html
        if !script.isEmpty, let end = html.range(of: "</body>", options: .backwards) {
            html.replaceSubrange(end, with: "<script>\n" + script + "\n</script>\n</body>")
        }
        return try HTMLReportRendererTests.load(html, screenshot: screenshot)
    }

    static func pick(_ select: String, _ value: Int) -> String {
        "(function () { var s = document.getElementById('\(select)'); s.value = '\(value)'; s.dispatchEvent(new Event('change')); })();"
    }

    @Test("the waterfall's state bars: each phase's medians, drawn as their shares under the phase; a picked run's own states")
    func waterfallBars() throws {
        let report = Self.statesReport()
        let html = try HTMLReportRenderer().render(report)
        let page = try Self.load(html, screenshot: "states-page")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        #expect(page.bodyAttribute("data-label-overlaps") == "0", "\(page.bodyAttribute("data-overlap-pairs") ?? "")")
        let drawn = report.summary.phases.filter { $0.durationNs.median > 0 }
        let svg = try Self.chart(page, "waterfall")
        let bars = Self.bars(svg), rects = Self.phaseRects(svg)
        #expect(bars.count == drawn.count && rects.count == drawn.count, "\(bars.count) bars, \(rects.count) phases")
        for (index, phase) in drawn.enumerated() where index < min(bars.count, rects.count) {
            let medians = try #require(phase.threadState)
            Self.expectBar(bars[index], holds: medians, over: rects[index], "median \(phase.name)")
        }
        // Medians of different runs: the summary's sum is no run's duration, and the bar says so.
        let did = try #require(report.summary.phases.first { $0.name == "didFinishLaunching" })
        #expect(did.threadState?.totalNs != did.durationNs.median)
        #expect(page.dom.contains("each state's median over the runs (shares of their sum)"))
        // Each phase's largest states in words (the view's, the terminal's), cut at a comma to fit.
        let view = try Self.view(html)
        let viewWords = ((view["summaryPhases"] as? [[String: Any]]) ?? [])
            .compactMap { ($0["states"] as? [String: Any])?["words"] as? String }
        let words = svg.matches(of: /<text class="axis state-words"[^>]*>([^<]*)</).map { String($0.output.1) }
        #expect(words.count == drawn.count && viewWords.count == drawn.count)
        for (word, full) in zip(words, viewWords) {
            #expect(word == full || (word.hasSuffix(", …") && full.hasPrefix(String(word.dropLast(1)))), "\(word) / \(full)")
        }
        // The view's words are the terminal's (which cuts them at its label column, with "…").
        let text = try TextWaterfallRenderer().render(report)
        let textWords = text.split(separator: "\n").filter { $0.hasPrefix("  ↳ ") }
            .map { String($0.dropFirst(4).split(separator: "  ").first ?? "") }
        #expect(textWords.count == viewWords.count)
        for (line, full) in zip(textWords, viewWords) {
            #expect(line == full || (line.hasSuffix("…") && full.hasPrefix(String(line.dropLast()))), "\(line) / \(full)")
        }

        // Run 1 picked: its own states, which add up to each phase's duration.
        let picked = try Self.load(html, screenshot: "states-page-run1", then: Self.pick("lp-waterfall-select", 1))
        #expect(picked.bodyAttribute("data-render") == "ok", "\(picked.consoleLines)")
        let runSVG = try Self.chart(picked, "waterfall")
        let runBars = Self.bars(runSVG), runRects = Self.phaseRects(runSVG)
        let runPhases = report.runs[1].phases.filter { $0.durationNs > 0 }
        #expect(runBars.count == runPhases.count && runRects.count == runPhases.count)
        for (index, phase) in runPhases.enumerated() where index < min(runBars.count, runRects.count) {
            let states = try #require(phase.threadState)
            #expect(states.totalNs == phase.durationNs)
            Self.expectBar(runBars[index], holds: states, over: runRects[index], "run 1 \(phase.name)")
        }
    }

    @Test("the launch's bar, the reasons ranked with threshold and advice, one run's causes and other threads")
    func reasonsAndRunDetail() throws {
        let report = Self.statesReport()
        let summary = try #require(report.summary.threadStates)
        let html = try HTMLReportRenderer().render(report)
        let page = try Self.load(html, screenshot: "states-reasons")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.bodyAttribute("data-label-overlaps") == "0", "\(page.bodyAttribute("data-overlap-pairs") ?? "")")

        let launch = try #require(Self.bars(try Self.chart(page, "launch-states")).first)
        Self.expectBar(launch, holds: summary.launch, over: (0, 900), "the launch's medians")
        #expect(page.dom.contains("main thread, spawn → first frame (median of 3 runs)"))
        // The legend under it: each state's median in the text's units.
        let legend = try #require(page.dom.firstMatch(of: /<p class="legend state-legend">(.*?)<\/p>/.dotMatchesNewlines())?.output.1)
        let entries = legend.matches(of: /data-state="(\w+)"/).map { String($0.output.1) }
        #expect(entries == ThreadState.allCases.map(\.rawValue), "the waterfall's legend: every state")

        // Ranked as the summary ranks them (runs, then time): disk I/O in 3, cpuBound in 2, the lock in 1.
        let ranked = page.dom.matches(of: /<li class="reason reason-\w+" data-code="(\w+)">(.*?)<\/li>/.dotMatchesNewlines())
        #expect(ranked.map { String($0.output.1) } == ["diskIO", "cpuBound", "lockContention"])
        #expect(summary.reasons.map(\.code.rawValue) == ranked.map { String($0.output.1) })
        let text = try TextWaterfallRenderer(colour: false).render(report)
        for (reason, item) in zip(summary.reasons, ranked) {
            let body = item.output.2
            #expect(body.contains(reason.message) && body.contains("→ " + reason.advice), "\(body)")
            #expect(body.contains("raised at " + reason.threshold))
            // The bracketed context is the text's, word for word.
            let context = try #require(body.firstMatch(of: /\[([^;\]]*);/)?.output.1)
            #expect(text.contains("[" + context + "]"), "\(context)")
        }

        // Run 0 in detail (the first run with states): its bar, its causes by name, its threads.
        let run = report.runs[0], states = try #require(run.threadStates)
        let runBar = try #require(Self.bars(try Self.chart(page, "run-states")).first)
        Self.expectBar(runBar, holds: states.launch, over: (0, 900), "run 0's launch")
        #expect(runBar.totalNs == states.launchEndNs, "a run's states add up to its launch")
        #expect(page.dom.contains("app 1000 thread worker 1001 (this process)"), "the competitor, named as the text names tasks")
        #expect(page.dom.contains("Xvfb 812") && page.dom.contains("a timer"))
        #expect(page.dom.contains("/usr/lib/libfoo.so.1"))
        let lockTable = try #require(page.dom.firstMatch(of: /id="lp-lock-holders"(.*?)<\/table>/.dotMatchesNewlines())?.output.1)
        #expect(lockTable.contains("app 1000 thread worker 1001 (this process)"))
        let threadTable = try #require(page.dom.firstMatch(of: /id="lp-threads"(.*?)<\/table>/.dotMatchesNewlines())?.output.1)
        let threadBars = Self.bars(threadTable)
        #expect(threadBars.count == states.threads.count)
        for (thread, bar) in zip(states.threads, threadBars) {
            #expect(threadTable.contains("<td>\(thread.name) \(thread.tid)</td>"))
            Self.expectBar(bar, holds: thread.states, over: (0, 240), "thread \(thread.name)")
        }
        #expect(page.dom.contains("<li>a note on the figures</li>"))

        // Run 2 picked: its own reasons (no lock: no lock holders table).
        let picked = try Self.load(html, screenshot: "states-reasons-run2", then: Self.pick("lp-states-select", 2))
        #expect(picked.bodyAttribute("data-render") == "ok", "\(picked.consoleLines)")
        let pickedBar = try #require(Self.bars(try Self.chart(picked, "run-states")).first)
        Self.expectBar(pickedBar, holds: try #require(report.runs[2].threadStates?.launch), over: (0, 900), "run 2's launch")
        #expect(!picked.dom.contains(#"id="lp-lock-holders""#))
        let runReasons = try #require(picked.dom.firstMatch(of: /id="lp-run-reasons"(.*?)<\/ol>/.dotMatchesNewlines())?.output.1)
        let own = try #require(report.runs[2].threadStates?.reasons)
        #expect(runReasons.matches(of: /data-code="(\w+)"/).map { String($0.output.1) } == own.map(\.code.rawValue))
        for reason in own {
            #expect(runReasons.contains(reason.message) && runReasons.contains("[\(reason.percentOfLaunch)% of the launch, raised at \(reason.threshold)"))
        }
    }

    /// The page's view block (`<script id="lp-view">`), as JSON.
    @Test("every run's row: its main thread's states over its launch under it, from its spawn to its launch's end")
    func everyRunRows() throws {
        var report = Self.statesReport(runs: 4)
        report.runs[1].threadStates = nil
        let html = try HTMLReportRenderer().render(report)
        let page = try Self.load(html, screenshot: "states-every-run")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.bodyAttribute("data-label-overlaps") == "0", "\(page.bodyAttribute("data-overlap-pairs") ?? "")")
        let chart = try Self.chart(page, "runs")
        let rows = chart.matches(of: /<g class="state-bar" data-total-ns="\d+" data-run="(\d+)">/).map { Int($0.output.1) ?? -1 }
        #expect(rows == [0, 2, 3], "a bar for each run with states, none for run 1")
        let bars = Self.bars(chart)
        let withStates = report.runs.filter { $0.threadStates != nil }
        #expect(bars.count == withStates.count)
        for (run, bar) in zip(withStates, bars) {
            let states = try #require(run.threadStates)
            Self.expectBar(bar, holds: states.launch, over: nil, "run \(run.index)'s row")
            // On the rows' common time axis: from the spawn (one x for all) to the launch's end.
            #expect(abs(bar.x - bars[0].x) < 0.01, "run \(run.index): its bar starts at the spawn")
            let perNs = bar.width / Double(states.launchEndNs), first = bars[0].width / Double(withStates[0].threadStates!.launchEndNs)
            #expect(abs(perNs / first - 1) < 0.001, "run \(run.index): its bar ends at its launch's end")
        }
    }

    static func view(_ html: String) throws -> [String: Any] {
        let start = try #require(html.range(of: #"<script type="application/json" id="lp-view">"#))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        return try #require(try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8)) as? [String: Any])
    }

    /// The view block: the shares and names the script draws, computed in Swift from the report.
    @Test("the view block: each bar's parts are the report's states, their shares add up to 1; names as the text's")
    func viewBlock() throws {
        let report = Self.statesReport()
        let view = try Self.view(try HTMLReportRenderer().render(report))
        func expectParts(_ bar: Any?, _ breakdown: ThreadStateBreakdown?, _ what: String) {
            guard let breakdown, breakdown.totalNs > 0 else {
                #expect(bar == nil, "\(what): no bar without states")
                return
            }
            let parts = ((bar as? [String: Any])?["parts"] as? [[String: Any]]) ?? []
            #expect(parts.map { "\($0["state"] ?? "") \($0["ns"] ?? "")" } == Self.parts(breakdown).map { "\($0.0) \($0.1)" }, "\(what)")
            let shares = parts.compactMap { $0["share"] as? Double }
            #expect(abs(shares.reduce(0, +) - 1) < 1e-9, "\(what): \(shares)")
        }
        let summaryPhases = try #require(view["summaryPhases"] as? [[String: Any]])
        for (phase, drawn) in zip(report.summary.phases, summaryPhases) {
            expectParts(drawn["states"], phase.durationNs.median > 0 ? phase.threadState : nil, "summary \(phase.name)")
        }
        let runPhases = try #require(view["runPhases"] as? [[[String: Any]]])
        for (run, phases) in zip(report.runs, runPhases) {
            for (phase, drawn) in zip(run.phases, phases) {
                expectParts(drawn["states"], phase.durationNs > 0 ? phase.threadState : nil, "run \(run.index) \(phase.name)")
            }
        }
        let runStates = try #require(view["runStates"] as? [[String: Any]])
        #expect(runStates.count == report.runs.count)
        for (run, names) in zip(report.runs, runStates) {
            let states = try #require(run.threadStates)
            #expect(names["title"] as? String == "run \(run.index): main thread, spawn → \(DurationText.text(states.launchEndNs))")
            #expect((names["reasonContexts"] as? [String])?.count == states.reasons.count)
            #expect(names["competitors"] as? [String] == states.cpuCompetitors.map(\.task.text))
            #expect(names["wakers"] as? [String] == states.wakers.map(\.wakerText))
            #expect(names["lockHolders"] as? [String] == states.lockHolders.map(\.task.text))
            let threads = (names["threads"] as? [Any]) ?? []
            #expect(threads.count == states.threads.count)
            for (thread, bar) in zip(states.threads, threads) { expectParts(bar, thread.states, "thread \(thread.tid)") }
        }
        let legend = try #require(view["stateLegend"] as? [[String: Any]])
        #expect(legend.map { $0["label"] as? String ?? "" } == ThreadState.allCases.map(\.label))
        #expect(legend.first { $0["state"] as? String == "diskIO" }?["perfetto"] as? String == "Uninterruptible Sleep (IO)")
    }

    @Test("no thread states: the page says why; a run that lost them is named and shows the warning")
    func withoutStates() throws {
        // States unavailable on every run: the warning's message, no bar.
        var runs = (0..<2).map { ExportSamples.run(index: $0, firstFrameMs: 15, tasks: false) }
        let why = "no thread states: launchprof may not open the scheduler's tracepoints (not root)"
        for index in runs.indices { runs[index].warnings = [TimelineWarning(.threadStatesUnavailable, why)] }
        let none = try Self.load(try HTMLReportRenderer().render(ExportSamples.report(runs)), screenshot: "states-none")
        #expect(none.bodyAttribute("data-render") == "ok", "\(none.consoleLines)")
        #expect(none.dom.contains(#"id="lp-no-thread-states">\#(why)<"#))
        #expect(Self.bars(Substring(none.dom)).isEmpty)
        // An old report, or states turned off: no section at all.
        let off = try Self.load(try HTMLReportRenderer().render(ExportSamples.report([ExportSamples.run(index: 0, firstFrameMs: 15)])),
                                screenshot: "states-off")
        #expect(off.bodyAttribute("data-render") == "ok" && !off.dom.contains(#"id="lp-thread-states""#))

        // Run 1 of 3 lost its records: named under the medians; picked, it shows its warning.
        var report = Self.statesReport()
        let lost = "no thread states: the kernel dropped 7 scheduler record(s) during the launch"
        report.runs[1].threadStates = nil
        for index in report.runs[1].phases.indices { report.runs[1].phases[index].threadState = nil }
        report.runs[1].warnings = [TimelineWarning(.threadStatesLost, lost)]
        report = ExportSamples.report(report.runs)
        let html = try HTMLReportRenderer().render(report)
        let page = try Self.load(html, screenshot: "states-lost", then: Self.pick("lp-states-select", 1))
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.dom.contains("median of 2 runs"))
        #expect(page.dom.contains("no thread states in run 1: the kernel dropped scheduler records"))
        #expect(page.dom.contains("run 1 (no thread states)"))
        #expect(page.dom.contains(#"id="lp-run-no-states">no thread states in run 1: \#(lost)<"#))
        #expect(!page.dom.contains(#"data-chart="run-states""#))
    }

    /// A prewarm page with states: the bars stay under their phases on both sides of the hold's
    /// break, nothing overlaps, and a run's launch says the hold is left out.
    @Test("prewarm page with thread states: bars under their phases across the break, the hold left out")
    func prewarmStates() throws {
        var report = HTMLReportRendererTests.prewarmReport()
        for i in report.runs.indices {
            var launch = ThreadStateBreakdown()
            for j in report.runs[i].phases.indices where report.runs[i].phases[j].durationNs > 0 {
                let duration = report.runs[i].phases[j].durationNs
                let split = ThreadStateBreakdown(runningNs: duration * 3 / 4, tracedNs: duration - duration * 3 / 4)
                report.runs[i].phases[j].threadState = split
                for state in ThreadState.allCases { launch[state] += split[state] }
            }
            report.runs[i].threadStates = LaunchThreadStates(
                mainThread: report.runs[i].pid, launchEndNs: report.runs[i].metrics.timeToFirstFrameNs ?? 0, launch: launch)
        }
        let summary = report.summary.prewarm
        report = ExportSamples.report(report.runs)
        report.summary.prewarm = summary
        let page = try Self.load(try HTMLReportRenderer().render(report), screenshot: "states-prewarm")
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.bodyAttribute("data-label-overlaps") == "0", "\(page.bodyAttribute("data-overlap-pairs") ?? "")")
        let svg = try Self.chart(page, "waterfall")
        let bars = Self.bars(svg), rects = Self.phaseRects(svg)
        let drawn = report.summary.phases.filter { $0.durationNs.median > 0 }
        #expect(bars.count == drawn.count && rects.count == drawn.count)
        for (index, phase) in drawn.enumerated() where index < min(bars.count, rects.count) {
            Self.expectBar(bars[index], holds: try #require(phase.threadState), over: rects[index], "prewarm \(phase.name)")
        }
        #expect(page.dom.contains("run 0: main thread, spawn → 508 ms (the 500 ms hold left out)"))
        #expect(page.dom.contains("a prewarmed launch's hold is left out"))
    }

    /// A real launch of the fixture whose phases are each in one known state: the page's bars say
    /// the state each phase was in, they hold the report's times, the reasons are the report's,
    /// and the lock's holder is a thread of the fixture. Needs root (the scheduler's tracepoints):
    /// fails without.
    @Test("a real launch: spin, nanosleep and mutex phases drawn in their states; the lock and its holder")
    func realLaunch() throws {
        let fixture = try ThreadStateSourceTests.fixture()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lp-states-html-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let json = work.appendingPathComponent("report.json").path, html = work.appendingPathComponent("report.html").path
        // Each phase 40 ms (the fixture's default); no cold read (the disk's state is the source tests').
        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--json", json, "--html", html, fixture])
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(1_500))")
        let report = try JSONDecoder().decode(LaunchReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        let summary = try #require(report.summary.threadStates, "no thread states: \(report.runs.first?.warnings ?? [])")
        let page = try HeadlessChromium.load(html, screenshot: try HeadlessChromium.artifactPath("states-real.png"))
        #expect(page.bodyAttribute("data-render") == "ok", "\(page.consoleLines)")
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")

        let drawn = report.summary.phases.filter { $0.durationNs.median > 0 && ($0.threadState?.totalNs ?? 0) > 0 }
        let bars = Self.bars(try Self.chart(page, "waterfall"))
        #expect(bars.count == drawn.count)
        func largest(_ name: String) throws -> String? {
            let index = try #require(drawn.firstIndex { $0.name == name }, "no phase \(name)")
            guard index < bars.count else { return nil }
            Self.expectBar(bars[index], holds: try #require(drawn[index].threadState), over: nil, name)
            return bars[index].segments.max { $0.ns < $1.ns }?.state
        }
        #expect(try largest("nanosleep") == "sleeping")
        #expect(try largest("mutex") == "lock")
        let spin = try largest("spin")
        #expect(spin == "running" || spin == "runnable", "a spin on a busy machine may wait for a CPU, never sleep")
        // The reasons the report raised (which ones depends on the machine's load: a lock of 40 ms
        // is under 10% of a launch slowed past 400 ms), ranked as the summary ranks them.
        let ranked = page.dom.matches(of: /<li class="reason reason-\w+" data-code="(\w+)">(.*?)<\/li>/.dotMatchesNewlines())
        #expect(ranked.map { String($0.output.1) } == summary.reasons.map(\.code.rawValue))
        for (reason, item) in zip(summary.reasons, ranked) {
            #expect(item.output.2.contains(reason.message) && item.output.2.contains("raised at " + reason.threshold), "\(item.output.2)")
        }
        // The lock's holder, whatever the thresholds: a thread of the fixture.
        let holders = try #require(page.dom.firstMatch(of: /id="lp-lock-holders"(.*?)<\/table>/.dotMatchesNewlines())?.output.1)
        #expect(holders.contains("(this process)"), "\(holders)")
        let threads = try #require(report.runs.first { $0.threadStates != nil }?.threadStates?.threads)
        #expect(threads.count >= 2, "the holder and the contending thread")
    }
}
