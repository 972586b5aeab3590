import Foundation
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// `run --metrickit/--trace` and `launchprof report --html` end to end: the built executable on
/// the demo app and on a fixture, every document read by the strict MetricKit parser or
/// validated against its schema, and the HTML drawn by headless Chromium.
@Suite("Exports: the command line", .serialized)
struct ReportExportCommandTests {
    struct Outcome {
        var status: Int32
        var stderr: String
    }

    func launchprof(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = try LaunchprofBinary.url()
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        process.standardError = err
        try process.run()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stderr: String(decoding: stderr, as: UTF8.self))
    }

    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lp-exports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    struct Exported {
        var report: LaunchReport
        var metrics: MetricKitPayloadParser.MetricPayload
        var diagnostics: MetricKitPayloadParser.DiagnosticPayload
        var trace: TraceDocument
        var reportPath: String
        /// CLOCK_MONOTONIC before and after the command: every spawn lies inside.
        var monotonicWindow: ClosedRange<UInt64>
    }

    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// `launchprof run` with every export; validates each file and reads it back.
    func runWithExports(_ program: String, runs: Int, thresholdMs: String, extra: [String] = [], in dir: URL) throws -> Exported {
        let reportPath = dir.appendingPathComponent("report.json").path
        let trace = dir.appendingPathComponent("trace.json").path
        let metrickit = dir.appendingPathComponent("metrickit").path
        let before = Self.monotonicNow()
        let outcome = try launchprof(
            ["run", "--runs", String(runs), "--json", reportPath, "--metrickit", metrickit, "--trace", trace,
             "--launch-diagnostic-threshold", thresholdMs] + extra + [program])
        let after = Self.monotonicNow()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        try SchemaValidator.expectValid(file: reportPath, against: .launchReport)
        try SchemaValidator.expectValid(file: metrickit + "/metrics.json", against: .metricKitMetrics)
        try SchemaValidator.expectValid(file: metrickit + "/diagnostics.json", against: .metricKitDiagnostics)
        let traceBytes = Array(try Data(contentsOf: URL(fileURLWithPath: trace)))
        // The real files decode with the types MetricKit's consumers declare.
        typealias Mirror = MetricKitConsumerMirrors
        let metricsData = try Data(contentsOf: URL(fileURLWithPath: metrickit + "/metrics.json"))
        let diagnosticsData = try Data(contentsOf: URL(fileURLWithPath: metrickit + "/diagnostics.json"))
        _ = try Mirror.decoder().decode(Mirror.MetricPayload.self, from: metricsData)
        _ = try Mirror.decoder().decode(Mirror.MeterDiagnosticPayload.self, from: diagnosticsData)
        let diagnosticsTop = try JSONSerialization.jsonObject(with: diagnosticsData) as? [String: Any] ?? [:]
        for key in ["appLaunchDiagnostics", "hangDiagnostics"] {
            for diagnostic in diagnosticsTop[key] as? [[String: Any]] ?? [] {
                let tree = try JSONSerialization.data(withJSONObject: diagnostic["callStackTree"] ?? [:])
                _ = try JSONDecoder().decode(Mirror.SentryCallStackTree.self, from: tree)
            }
        }
        return Exported(
            report: try JSONDecoder().decode(LaunchReport.self, from: Data(contentsOf: URL(fileURLWithPath: reportPath))),
            metrics: try MetricKitPayloadParser.metrics(Data(contentsOf: URL(fileURLWithPath: metrickit + "/metrics.json"))),
            diagnostics: try MetricKitPayloadParser.diagnostics(
                Data(contentsOf: URL(fileURLWithPath: metrickit + "/diagnostics.json"))),
            trace: try TraceEventRendererTests.expectWellFormed(traceBytes), reportPath: reportPath,
            monotonicWindow: before...after)
    }

    /// Each bucket holds exactly the report's values that fall in it.
    func expectHistogram(_ histogram: MetricKitPayloadParser.Histogram?, holds valuesNs: [UInt64], _ what: String) {
        guard let histogram else {
            Issue.record("\(what) is missing")
            return
        }
        #expect(histogram.total == valuesNs.count, "\(what): bucket counts sum to the runs")
        for bucket in histogram.buckets {
            let inside = valuesNs.filter { $0 >= UInt64(bucket.startMs) * 1_000_000 && $0 < UInt64(bucket.endMs) * 1_000_000 }
            #expect(inside.count == bucket.count, "\(what) \(bucket.startMs)–\(bucket.endMs) ms")
        }
    }

    func expectTraceHoldsEveryPhase(_ exported: Exported) {
        for (position, run) in exported.report.runs.enumerated() {
            let mine = exported.trace.traceEvents.filter {
                $0.pid == position + 1 && ($0.ph == "X" || $0.ph == "i") && $0.name != "spawn" && $0.cat != "samples"
                    && $0.cat != "flag"
            }
            #expect(mine.count == run.phases.count, "run \(run.index): one event per phase")
            // And the spawn on the system clocks, as the run recorded it.
            let spawn = exported.trace.traceEvents.first { $0.pid == position + 1 && $0.name == "spawn" }
            let monotonic = run.spawnedAt.map { TraceEvent.Argument.integer(Int64($0.monotonicNs)) }
            #expect(monotonic != nil && spawn?.args?["clockMonotonicNs"] == monotonic, "run \(run.index): spawn clocks")
            if let spawnedAt = run.spawnedAt {
                #expect(exported.monotonicWindow.contains(spawnedAt.monotonicNs), "run \(run.index): spawned while the command ran")
                #expect(spawnedAt.boottimeNs >= spawnedAt.monotonicNs, "boot time counts suspended time too")
            }
        }
    }

    static func demoProgram() throws -> String {
        let path = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw LaunchprofBinary.Missing(description: "launchprof-demo is not built next to launchprof (swift build first)")
        }
        return path
    }

    @Test("the demo app: payloads, trace and an HTML report that Chromium draws without a console message")
    func demoApp() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let runs = 6
        let runPage = dir.appendingPathComponent("run.html").path
        let exported = try runWithExports(try Self.demoProgram(), runs: runs, thresholdMs: "1", extra: ["--html", runPage], in: dir)
        let report = exported.report
        #expect(report.runs.count == runs)

        // Every demo run draws a frame and runs two extended tasks.
        let firstFrames = report.runs.compactMap(\.metrics.timeToFirstFrameNs)
        #expect(firstFrames.count == runs)
        expectHistogram(exported.metrics.launch["histogrammedTimeToFirstDrawKey"], holds: firstFrames, "time to first draw")
        expectHistogram(
            exported.metrics.launch["histogrammedExtendedLaunch"], holds: report.runs.compactMap(\.metrics.extendedLaunchNs),
            "extended launch")
        #expect(Set(exported.metrics.launch.keys) == ["histogrammedTimeToFirstDrawKey", "histogrammedExtendedLaunch"])
        #expect(exported.metrics.responsiveness.isEmpty, "no sampler, no hangs")
        #expect(exported.metrics.metaData["appBuildVersion"] as? String == report.target.buildID)
        #expect(exported.metrics.metaData["bundleIdentifier"] as? String == report.target.path)

        // Over a 1 ms threshold every launch gets a diagnostic, with its pid and duration.
        #expect(exported.diagnostics.launches.map { $0.metaData["pid"] as? Int } == report.runs.map { Int($0.pid) })
        for (diagnostic, truth) in zip(exported.diagnostics.launches, firstFrames) {
            let ms = try MetricKitPayloadParser.milliseconds(diagnostic.metaData["launchDuration"], "launchDuration")
            #expect(ms == (Double(truth) / 1e6).rounded(), "whole ms, rounded to the nearest")
        }
        #expect(exported.diagnostics.hangs.isEmpty)
        expectTraceHoldsEveryPhase(exported)

        let html = dir.appendingPathComponent("report.html").path
        let outcome = try launchprof(["report", exported.reportPath, "--html", html])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // `run --html` drew the same page from the runs it kept as `report --html` from the file.
        #expect(try Data(contentsOf: URL(fileURLWithPath: runPage)) == Data(contentsOf: URL(fileURLWithPath: html)))
        let page = try HeadlessChromium.load(html, screenshot: try HeadlessChromium.artifactPath("demo-report.png"))
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        #expect(page.bodyAttribute("data-render") == "ok")
        // waterfall, every run, histogram, strip, pre-main (no sampler, no prewarm); with thread
        // states (launchprof as root), the launch's state bar and the first run's.
        let states = report.summary.threadStates
        #expect(page.bodyAttribute("data-charts") == (states == nil ? "5" : "7"))
        if states != nil {
            // A state bar under each phase that has states, the launch's, run 0's and its threads',
            // and one under each run's row of "every run" (the first 300).
            let phaseBars = report.summary.phases.filter { $0.durationNs.median > 0 && ($0.threadState?.totalNs ?? 0) > 0 }.count
            let first = try #require(report.runs.first { $0.threadStates != nil }?.threadStates)
            let threadBars = first.threads.filter { $0.states.totalNs > 0 }.count
            let rowBars = report.runs.prefix(300).filter { $0.threadStates != nil }.count
            #expect(page.count(class: "state-bar") == phaseBars + 2 + threadBars + rowBars)
            #expect(page.count(class: "reason") == report.summary.threadStates?.reasons.count)
        }
        let spans = report.summary.phases.filter { $0.durationNs.median > 0 }
        #expect(page.count(class: "phase") == spans.count, "a waterfall bar per phase")
        #expect(page.count(class: "instant") >= report.summary.phases.count - spans.count)
        #expect(page.count(class: "run-phase") == report.runs.reduce(0) { $0 + $1.phases.filter { $0.durationNs > 0 }.count })
        #expect(page.count(class: "run-dot") == runs)
        #expect(page.dataCounts(class: "hist-bar").reduce(0, +) == runs)
        let preMain = report.summary.phases.filter {
            ($0.name == "exec" || $0.name.hasPrefix("loader.") || $0.name.hasPrefix("program.")) && $0.durationNs.median > 0
        }
        #expect(page.count(class: "library-bar") == preMain.count)
        #expect(preMain.contains { $0.object?.hasSuffix("libc.so.6") == true })
    }

    @Test("the demo app sampled: every frame's binaryUUID is its object's build-id in NSUUID form, the stack track nests")
    func sampledDemo() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exported = try runWithExports(try Self.demoProgram(), runs: 2, thresholdMs: "1", extra: ["--sample"], in: dir)
        expectTraceHoldsEveryPhase(exported)
        #expect(exported.diagnostics.launches.count == 2)
        #expect(exported.diagnostics.launches.allSatisfy { $0.frameCount > 0 }, "sampled: each launch diagnostic has its tree")
        var frames: [CallStackTree.Frame] = []
        func collect(_ frame: CallStackTree.Frame) {
            frames.append(frame)
            for child in frame.subFrames ?? [] { collect(child) }
        }
        for run in exported.report.runs {
            for stack in run.callStackTree?.callStacks ?? [] { stack.callStackRootFrames.forEach(collect) }
        }
        #expect(!frames.isEmpty)
        for frame in frames {
            #expect(frame.binaryUUID == CallStackTree.Frame.uuid(buildID: frame.launchprofBuildID), "\(frame.binaryName)")
            #expect(UUID(uuidString: frame.binaryUUID) != nil)
        }
        // The demo's own frames carry the demo's build-id, the one the report names.
        let demo = frames.filter { $0.binaryName == "launchprof-demo" }
        #expect(!demo.isEmpty && demo.allSatisfy { $0.launchprofBuildID == exported.report.target.buildID })
        #expect(exported.trace.traceEvents.contains { $0.tid == 300 && $0.ph == "X" }, "the stack track")
    }

    @Test("a fixture with app phases and extended tasks: payload buckets hold the report's runs")
    func fixture() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let program = try RunFixtures.app(libraries: ["exporta"])
        let exported = try runWithExports(
            program, runs: 4, thresholdMs: "100000",
            extra: ["--env", "LP_PHASES=configure:1000:0,restore:0:1000", "--env", "LP_TASKS=prefetch:3000,index:2000"],
            in: dir)
        let report = exported.report
        #expect(report.runs.count == 4)
        expectHistogram(
            exported.metrics.launch["histogrammedTimeToFirstDrawKey"], holds: report.runs.compactMap(\.metrics.timeToFirstFrameNs),
            "time to first draw")
        expectHistogram(
            exported.metrics.launch["histogrammedExtendedLaunch"], holds: report.runs.compactMap(\.metrics.extendedLaunchNs),
            "extended launch")
        #expect(exported.diagnostics.launches.isEmpty, "no launch takes 100 s")
        expectTraceHoldsEveryPhase(exported)
        let taskTracks = exported.trace.traceEvents.filter { $0.pid == 1 && $0.cat == "extendedLaunch" }
        #expect(Set(taskTracks.map(\.tid)).count == 2)
        #expect(exported.trace.traceEvents.contains { $0.pid == 1 && $0.name == "loader.init libexporta.so" })
        #expect(exported.trace.traceEvents.contains { $0.pid == 1 && $0.name == "configure" && $0.ph == "X" })
    }

    @Test("the sampled, prewarmed, hanging report draws its flags, flame graph and prewarm comparison")
    func richReportInChromium() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = ExportSamples.report([
            ExportSamples.run(index: 0, firstFrameMs: 14, hangsMs: [300], sampled: true),
            ExportSamples.run(index: 1, firstFrameMs: 18, sampled: true),
            ExportSamples.run(index: 2, firstFrameMs: 9_000, optimizedMs: 20),
        ])
        let reportPath = dir.appendingPathComponent("report.json").path
        try Data(try LaunchReportWriter.encode(report)).write(to: URL(fileURLWithPath: reportPath))
        try SchemaValidator.expectValid(file: reportPath, against: .launchReport)
        let html = dir.appendingPathComponent("report.html").path
        let trace = dir.appendingPathComponent("trace.json").path
        let outcome = try launchprof(["report", reportPath, "--html", html, "--trace", trace])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        _ = try TraceEventRendererTests.expectWellFormed(Array(try Data(contentsOf: URL(fileURLWithPath: trace))))
        let page = try HeadlessChromium.load(html, screenshot: try HeadlessChromium.artifactPath("sampled-report.png"))
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        #expect(page.bodyAttribute("data-render") == "ok")
        #expect(page.bodyAttribute("data-charts") == "8", "7 and the prewarm timeline")
        #expect(page.count(class: "flag-row") == 1)
        // Merged over two sampled runs: all samples, main, parse, read, app+0x4000.
        #expect(page.count(class: "flame-frame") == 5)
        #expect(page.count(class: "prewarm") == 1)
        // The distribution strip holds the two ordinary runs; the comparison all three.
        #expect(page.count(class: "run-dot") == 2 + 3)
    }

    /// The check above is only worth something if it sees errors: a page that logs and throws.
    @Test("the headless check sees a console message and an uncaught error")
    func chromiumSeesErrors() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = dir.appendingPathComponent("broken.html").path
        try Data(
            """
            <!DOCTYPE html><html><body data-render="pending"><script>
            window.addEventListener("error", function (e) { document.body.setAttribute("data-render", "error: " + e.message); });
            console.warn("a warning");
            undefinedFunction();
            </script></body></html>
            """.utf8
        ).write(to: URL(fileURLWithPath: html))
        let page = try HeadlessChromium.load(html, screenshot: dir.appendingPathComponent("broken.png").path, height: 200)
        #expect(page.consoleLines.contains { $0.contains("a warning") }, "\(page.consoleLines)")
        #expect(page.consoleLines.contains { $0.contains("undefinedFunction") }, "\(page.consoleLines)")
        #expect(page.bodyAttribute("data-render")?.hasPrefix("error: ") == true)
    }

    @Test("bad inputs: a clear message, its exit status, nothing half-written")
    func badInputs() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("plain-file").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let notReport = dir.appendingPathComponent("not-report.json").path
        try Data(#"{"runs": 3}"#.utf8).write(to: URL(fileURLWithPath: notReport))
        let cases: [([String], Int32, String)] = [
            (["run", "--metrickit", file, "/bin/true"], 73, "--metrickit \(file): Could not write to '\(file)': it is not a directory"),
            (["run", "--trace", dir.path, "/bin/true"], 73, "is a directory"),
            (["run", "--launch-diagnostic-threshold", "-1", "/bin/true"], 64, "--launch-diagnostic-threshold"),
            (["run", "--metrickit", dir.path + "/missing/deeper", "/bin/true"], 73, "does not exist; create it first"),
            (["report", dir.path + "/none.json", "--html", dir.path + "/x.html"], 66, "Could not read '\(dir.path)/none.json'"),
            (["report", notReport, "--html", dir.path + "/x.html"], 65, "is not a launchprof launch report"),
            (["report", notReport], 64, "Nothing to write"),
        ]
        for (arguments, status, message) in cases {
            let outcome = try launchprof(arguments)
            #expect(outcome.status == status, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["not-report.json", "plain-file"], "no partial output: \(left)")
    }
}
