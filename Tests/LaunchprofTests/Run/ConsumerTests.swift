import Foundation
import Testing

/// What launchprof writes about real launches, read by the programs that consume it: the trace
/// by speedscope's importer and Perfetto's slice rules (`TraceViewerNesting`), the export by
/// promtool and Prometheus's OpenMetrics parser, the page by headless Chromium. And the three
/// views of the sampled stacks (folded stacks, the page's flame graph, the MetricKit call stack
/// tree each run carries) count the same samples.
@Suite("consumers: real launches read by speedscope, Perfetto, Prometheus and Chromium", .serialized)
struct ConsumerTests {
    /// The programs the issue named: a Python start-up, the Swift demo, a GTK app on an X
    /// server, and a crash.
    enum Program: String, CaseIterable, CustomStringConvertible {
        case python, swiftDemo, gtk3Demo, crash
        var description: String { rawValue }
    }

    @Test(arguments: Program.allCases)
    func everyConsumerReadsWhatLaunchprofWrote(_ program: Program) throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lp-consumers-\(program)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var environment = ProcessInfo.processInfo.environment
        var command: [String]
        var options: [String] = []
        var server: XvfbServer?
        defer { server?.stop() }
        switch program {
        case .python:
            command = ["/usr/bin/python3", "-c", "import json"]
        case .swiftDemo:
            command = [try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo-swift").path]
        case .gtk3Demo:
            let display = try XvfbServer()
            server = display
            environment["DISPLAY"] = display.display
            environment["NO_AT_BRIDGE"] = "1"
            command = ["gtk3-demo"]
            options = ["--ready", "frame", "--timeout", "20"]
        case .crash:
            command = [try RunFixtures.program("crash")]
            environment["LP_PROGRAM_BUSY_US"] = "20000"
        }
        let json = work.appendingPathComponent("report.json").path
        let trace = work.appendingPathComponent("trace.json").path
        let folded = work.appendingPathComponent("stacks.folded").path
        let html = work.appendingPathComponent("report.html").path
        let outcome = try LaunchprofCLI.run(
            ["run", "-r", "3", "--sample", "--json", json, "--trace", trace, "--folded", folded] + options + command,
            environment: environment)
        #expect(outcome.status == (program == .crash ? 1 : 0), "\(program): \(outcome.stderr.suffix(1_500))")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.count == 3)

        // The trace: where speedscope and Perfetto nest each slice, and the viewers' arithmetic.
        let traceBytes = Array(try Data(contentsOf: URL(fileURLWithPath: trace)))
        try TraceViewerNesting.expectNested(traceBytes, "\(program) trace")
        _ = try TraceEventRendererTests.expectWellFormed(traceBytes)

        // Samples: the runs' call stack trees (MetricKit's shape, copied into its diagnostics),
        // their per-phase trees and the folded stacks count the same main-thread samples.
        var treeTotal = 0
        var phaseTotal = 0
        for run in runs {
            treeTotal += Self.mainThreadSamples(run["callStackTree"] as? [String: Any])
            let phases = (run["sampling"] as? [String: Any])?["phaseCallStackTrees"] as? [[String: Any]] ?? []
            phaseTotal += phases.reduce(0) { $0 + Self.mainThreadSamples($1["callStackTree"] as? [String: Any]) }
            Self.expectParentsHoldTheirChildren(run["callStackTree"] as? [String: Any], "\(program) run \(run["index"] ?? "?")")
        }
        let foldedText = try String(contentsOfFile: folded, encoding: .utf8)
        let foldedMain = foldedText.split(separator: "\n").filter { !$0.hasPrefix("thread ") }
            .reduce(0) { $0 + (Int($1.split(separator: " ").last ?? "") ?? 0) }
        #expect(treeTotal > 0, "\(program): sampled")
        #expect(foldedMain == treeTotal, "\(program): folded stacks \(foldedMain) vs call stack trees \(treeTotal)")
        #expect(phaseTotal == treeTotal, "\(program): phase trees \(phaseTotal) vs whole-launch trees \(treeTotal)")

        // The page: it draws, its flame graph counts what the trees and the folded stacks do,
        // and a crash shows its stack.
        let rendered = try LaunchprofCLI.run(["report", json, "--html", html])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let page = try HeadlessChromium.load(html, screenshot: try HeadlessChromium.artifactPath("consumer-\(program).png"))
        #expect(page.bodyAttribute("data-render") == "ok", "\(program): \(page.consoleLines)")
        let flame = try #require(page.dom.firstMatch(of: /data-chart="flame-graph"[^>]*data-samples="([0-9]+)"/)?.output.1)
        #expect(Int(flame) == treeTotal, "\(program): the page's flame graph \(flame) vs \(treeTotal)")
        if program == .crash {
            #expect(page.dom.contains(#"<ol class="crash-stack">"#) && page.dom.contains("lp_crashing_constructor"), "the crash stack on the page")
            #expect(page.dom.contains(#"before main <span class="runs">— every run"#), "the phases not measured")
        }

        // The export: promtool on the classic text, Prometheus's OpenMetrics parser on the other.
        let classic = try LaunchprofCLI.run(["export", "--prometheus", json])
        #expect(classic.status == 0, "\(classic.stderr)")
        let checked = try Promtool.checkMetrics(classic.stdout)
        #expect(checked.status == 0, "\(program): promtool check metrics: \(checked.output)")
        let openMetrics = try LaunchprofCLI.run(["export", "--openmetrics", json])
        #expect(openMetrics.status == 0, "\(openMetrics.stderr)")
        _ = try OpenMetricsParser.parse(openMetrics.stdout)
    }

    static func mainThreadSamples(_ tree: [String: Any]?) -> Int {
        let stacks = tree?["callStacks"] as? [[String: Any]] ?? []
        return stacks.filter { $0["threadAttributed"] as? Bool == true }
            .flatMap { $0["callStackRootFrames"] as? [[String: Any]] ?? [] }
            .reduce(0) { $0 + ($1["sampleCount"] as? Int ?? 0) }
    }

    /// No frame's callees hold more samples than the frame itself.
    static func expectParentsHoldTheirChildren(_ tree: [String: Any]?, _ what: String) {
        func check(_ frame: [String: Any]) {
            let children = frame["subFrames"] as? [[String: Any]] ?? []
            let total = children.reduce(0) { $0 + ($1["sampleCount"] as? Int ?? 0) }
            #expect(total <= frame["sampleCount"] as? Int ?? 0, "\(what): \(frame["symbol"] ?? "?") holds fewer samples than its callees")
            children.forEach(check)
        }
        for stack in tree?["callStacks"] as? [[String: Any]] ?? [] {
            (stack["callStackRootFrames"] as? [[String: Any]] ?? []).forEach(check)
        }
    }
}
