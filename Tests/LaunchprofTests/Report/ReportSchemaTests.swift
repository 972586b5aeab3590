import Foundation
import LaunchprofReport
import Testing

/// The schemas in docs/formats/schema against the model: every stored property of every report type
/// is named in its schema (so a field added to the model without its schema line fails here,
/// naming both), and a report with every optional field set validates.
@Suite("Report schemas")
struct ReportSchemaTests {
    static func schema(_ name: JSONSchemaName) throws -> [String: Any] {
        let url = FixtureBuilder.packageRoot.appendingPathComponent("docs/formats/schema/" + name.fileName)
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// Property names a `$defs` entry (or the top level, `nil`) allows.
    static func properties(_ schema: [String: Any], _ definition: String?) throws -> Set<String> {
        let object = try definition.map { name in
            try #require((schema["$defs"] as? [String: Any])?[name] as? [String: Any], "$defs/\(name)")
        } ?? schema
        return Set((object["properties"] as? [String: Any] ?? [:]).keys)
    }

    static func labels(_ value: Any) -> Set<String> {
        Set(Mirror(reflecting: value).children.compactMap(\.label))
    }

    static func expectNamed(
        _ value: Any, in schema: [String: Any], _ definition: String?, extra: Set<String> = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let allowed = try properties(schema, definition).union(extra)
        let missing = labels(value).subtracting(allowed)
        #expect(
            missing.isEmpty,
            "\(type(of: value)) has \(missing.sorted()) that docs/formats/schema's \(definition ?? "top level") does not list: add them there",
            sourceLocation: sourceLocation)
    }

    /// A run and a report with every optional field present.
    static func fullReport() -> LaunchReport {
        var run = ExportSamples.run(index: 0, firstFrameMs: 14, optimizedMs: 9, resumeMs: 3, hangsMs: [300], sampled: true)
        run.residentBeforeBytes = 4096
        run.closureBytes = 8192
        run.absent = [AbsentPhase(phase: "loader.map", reason: "stripped loader", image: 1)]
        run.warnings = [TimelineWarning(.duplicateFirstFrame, "twice")]
        run.phases.append(.init(name: "loader.map", startNs: 5, durationNs: 6, image: 1))
        run.phases[run.phases.count - 1].observerNs = 3
        var killed = ExportSamples.run(index: 1, firstFrameMs: 20, resumeMs: 4)
        killed.exitStatus = RunExit(signal: 9, coreDumped: false, killedBy: "timeout")
        killed.timedOut = true
        killed.outcome = .timedOut(after: 5_000_000_000, waitingFor: "the first-frame hook")
        run.outcome = .completed
        run.prewarm = PrewarmRun(
            freezeAt: "main", prewarmNs: 30_000_000, holdNs: 500_000_000, resumeAtNs: 530_000_000,
            frozenCPUNs: 0, frozenPSSBytes: 1_400_000)
        run.prewarm?.ordinaryTimeToFirstFrameNs = 40_000_000
        run.prewarm?.ordinaryTimeToMainNs = 31_000_000
        run.prewarm?.ordinaryPid = 77
        run.prewarm?.savingNs = -2_000_000
        run.prewarm?.poolHit = true
        run.states = [LifecycleState(.prewarmed, atNs: 30_000_000), LifecycleState(.active, atNs: 540_000_000)]
        run.sampling = LaunchSampling(
            rateHz: 1000, periodNs: 1_000_000, sampleCount: 5, onCPUNs: 3, runnableNs: 1, blockedNs: 1,
            lostRecords: 0, note: "too short to sample",
            phaseCallStackTrees: [.init(phase: "didFinishLaunching", callStackTree: ExportSamples.tree)],
            unwoundSamples: 5, unwoundFrames: 40, unwindNs: 5_000)
        run.phases[0].threadState = ThreadStateBreakdown(runningNs: run.phases[0].durationNs)
        run.threadStates = threadStates
        var report = ExportSamples.report([run, killed])
        let statistics = SummaryStatistics(count: 3, min: 1, median: 2, p90: 3, p99: 3, max: 3, mean: 2, stddev: 1, outliers: 0)
        report.summary.prewarm = PrewarmSummary(
            savingNs: SignedSummaryStatistics(count: 3, min: -2, median: 2, p90: 3, p99: 3, max: 3, mean: 1, stddev: 2, outliers: 0),
            losses: 1, prewarmNs: statistics, holdNs: statistics,
            ordinaryTimeToFirstFrameNs: statistics, frozenPSSBytes: statistics,
            hazards: [
                PrewarmHazard(kind: .wallClock, syscall: "clock_gettime", detail: "CLOCK_REALTIME", object: "app", function: "init"),
                PrewarmHazard(kind: .randomness, syscall: "getrandom", detail: "8 bytes", object: "libc.so.6", function: "libc.so.6+0x10"),
            ],
            prewarmSafe: false, hazardScanError: "scan failed", frozenCPURuns: 0,
            pool: .init(size: 2, launches: 3, hits: 2, expired: 1, heldPSSBytes: statistics, refillNs: statistics, ttlNs: 9))
        report.summary.flags = [
            FlagSummary(
                kind: .blocked, phase: "willFinishLaunching", function: "wait_for_config", object: "app", syscall: "poll",
                runs: 2, durationNs: statistics, advice: "move it off the main thread", path: ["load_settings", "wait_for_config"])
        ]
        report.mode = .init(runs: 2, warmup: 1, cold: true, timeoutNs: 5_000_000_000)
        report.mode.readiness = "stdout:ready"
        report.mode.observer = "uprobe"
        report.mode.observerReason = "auto: perf events permitted and the uprobe PMU present"
        report.mode.prewarm = true
        return report
    }

    /// Thread states with every field set.
    static let threadStates: LaunchThreadStates = {
        let x = TaskName(pid: 812, process: "Xvfb", tid: 812, thread: "Xvfb")
        let worker = TaskName(pid: 40, process: "app", tid: 41, thread: "worker")
        return LaunchThreadStates(
            mainThread: 40, launchEndNs: 7_000,
            launch: ThreadStateBreakdown(
                runningNs: 1_000, runnableNs: 1_000, sleepingNs: 1_000, lockNs: 1_000, diskIONs: 1_000, otherNs: 1_000,
                tracedNs: 1_000),
            timeline: [ThreadStateSpan(startNs: 0, durationNs: 7_000, state: .sleeping, blockedIn: "poll", wakedBy: "Xvfb 812")],
            threads: [ThreadStateSummary(tid: 41, name: "worker", startNs: 10, endNs: 7_000, states: .init(runningNs: 6_990))],
            cpuCompetitors: [TaskTime(task: x, ns: 1_000, ownProcess: false, launchprof: false)],
            wakers: [WakeCause(kind: .thread, task: x, state: .sleeping, ns: 1_000, count: 2)],
            fileReads: [FileRead(path: "/usr/lib/libbig.so", waitNs: 1_000, majorFaults: 3, pagesRead: 32)],
            lockHolders: [LockHolder(task: worker, ns: 1_000, count: 1, ownProcess: true)],
            reasons: [
                SlowLaunchReason(
                    code: .displayServer, message: "1.00 µs waiting for the X server", ns: 1_000, percentOfLaunch: 14,
                    threshold: "≥ 10% of the launch and ≥ 1.00 ms", advice: "batch requests", phase: "main")
            ],
            notes: ["a note"])
    }()

    @Test("every field of the LaunchReport model is in launch-report.schema.json")
    func launchReportNamesEveryField() throws {
        let schema = try Self.schema(.launchReport)
        let report = Self.fullReport()
        let run = report.runs[0]
        try Self.expectNamed(report, in: schema, nil)
        try Self.expectNamed(report.target, in: schema, "Target")
        try Self.expectNamed(report.host, in: schema, "Host")
        try Self.expectNamed(report.mode, in: schema, "Mode")
        try Self.expectNamed(run, in: schema, "LaunchRun")
        try Self.expectNamed(run.phases[0], in: schema, "LaunchPhase")
        try Self.expectNamed(run.absent[0], in: schema, "AbsentPhase")
        try Self.expectNamed(RunExit(code: 0), in: schema, "RunExit")
        try Self.expectNamed(run.warnings[0], in: schema, "TimelineWarning")
        try Self.expectNamed(try #require(run.flags?.first), in: schema, "LaunchFlag")
        try Self.expectNamed(ExportSamples.tree, in: schema, "CallStackTree")
        try Self.expectNamed(ExportSamples.tree.callStacks[0].callStackRootFrames[0], in: schema, "CallStackFrame")
        try Self.expectNamed(report.summary, in: schema, "LaunchSummary", extra: Set(Self.metricNames(schema)))
        try Self.expectNamed(report.summary.phases[0], in: schema, "PhaseSummary")
        try Self.expectNamed(try #require(report.summary.timeToMainNs), in: schema, "SummaryStatistics")
        try Self.expectNamed(try #require(run.prewarm), in: schema, "PrewarmRun")
        try Self.expectNamed(try #require(run.states?.first), in: schema, "LifecycleState")
        let prewarm = try #require(report.summary.prewarm)
        try Self.expectNamed(prewarm, in: schema, "PrewarmSummary")
        try Self.expectNamed(try #require(prewarm.pool), in: schema, "PoolSummary")
        try Self.expectNamed(try #require(prewarm.hazards.first), in: schema, "PrewarmHazard")
        try Self.expectNamed(try #require(run.sampling), in: schema, "LaunchSampling")
        try Self.expectNamed(try #require(report.summary.flags?.first), in: schema, "FlagSummary")
        try Self.expectNamed(RunOutcome.completed, in: schema, "RunOutcome")
        let states = try #require(run.threadStates)
        try Self.expectNamed(states, in: schema, "LaunchThreadStates")
        try Self.expectNamed(states.launch, in: schema, "ThreadStateBreakdown")
        try Self.expectNamed(states.wakers[0].task!, in: schema, "TaskName")
        try Self.expectNamed(try #require(report.summary.outcomes?.first), in: schema, "OutcomeCount")
        #expect(report.summary.outcomes?.map(\.runs) == [1, 1])
        // Metrics are named once, in MetricName.
        #expect(
            Self.labels(run.metrics) == Set(try Self.metricNames(schema)),
            "LaunchMetrics and $defs/MetricName list the same metrics")
        try SchemaValidator.expectValid(try LaunchReportWriter.encode(report), against: .launchReport, "full report")
    }

    static func metricNames(_ schema: [String: Any]) throws -> [String] {
        try #require(((schema["$defs"] as? [String: Any])?["MetricName"] as? [String: Any])?["enum"] as? [String])
    }

    @Test("the schema rejects what the model cannot produce")
    func rejects() throws {
        let good = String(decoding: try LaunchReportWriter.encode(Self.fullReport()), as: UTF8.self)
        #expect(try SchemaValidator.problems(Array(good.utf8), against: .launchReport) == nil)
        for (from, to) in [
            ("\"timeToMainNs\"", "\"timeToMainMs\""), ("\"startNs\":0", "\"startNs\":-1"),
            ("\"schemaVersion\":1", "\"schemaVersion\":2"), ("\"kind\":\"hang\"", "\"kind\":\"slow\""),
            // A crash names its signal; an outcome kind is one of the six.
            ("\"kind\":\"timedOut\"", "\"kind\":\"crashed\""), ("\"kind\":\"completed\"", "\"kind\":\"fine\""),
        ] {
            let bad = good.replacingOccurrences(of: from, with: to)
            #expect(bad != good, "\(from) occurs")
            #expect(try SchemaValidator.problems(Array(bad.utf8), against: .launchReport) != nil, "\(to) is refused")
        }
    }

    @Test("every field of the inspect model is in inspect-report.schema.json")
    func inspectNamesEveryField() throws {
        let schema = try Self.schema(.inspectReport)
        let relocations = InspectReport.Relocations(relative: 1)
        let object = InspectReport.Object(
            path: "/lib/a.so", loadedAs: "/lib/a.so", foundVia: "cache", type: "shared-object", soname: "a.so",
            buildID: "ab", sizeBytes: 1, needed: [], neededBy: ["/bin/x"], rpath: "/r", runpath: "/p", binding: "lazy",
            hashStyles: ["gnu"], tlsSizeBytes: 0, relocations: relocations,
            initializers: .init(initFunction: 1, initArray: 1, preinitArray: 0), finalizers: .init(finiFunction: 1, finiArray: 0),
            symbols: .init(imported: 1, exported: 2))
        let program = InspectReport.Program(
            path: "/bin/x", type: "pie", elfClass: "ELF64", machine: "x86-64", interpreter: "/lib64/ld-linux-x86-64.so.2",
            buildID: "cd", stripped: false, binding: "lazy", hashStyles: ["gnu"], tlsSizeBytes: 0, usesLoader: true)
        let report = InspectReport(
            script: .init(path: "/s", interpreter: "/bin/x", interpreterArgument: "-q"), program: program, objects: [object],
            missing: [.init(name: "b.so", neededBy: ["/lib/a.so"], reason: "not found")], initializerOrder: ["/lib/a.so"],
            totals: .init(
                objects: 1, missing: 1, sizeBytes: 1, relocations: relocations, initializers: 2, finalizers: 1,
                importedSymbols: 1, exportedSymbols: 2, estimatedLoaderNs: 10),
            advice: [.init(kind: "no-relr", message: "m", objects: ["/lib/a.so"], count: 1, costPerUnitNs: 2)],
            costModel: .standard)
        try Self.expectNamed(report, in: schema, nil)
        try Self.expectNamed(try #require(report.script), in: schema, "Script")
        try Self.expectNamed(program, in: schema, "Program")
        try Self.expectNamed(object, in: schema, "Object")
        try Self.expectNamed(relocations, in: schema, "Relocations")
        try Self.expectNamed(object.initializers, in: schema, "Initializers")
        try Self.expectNamed(object.finalizers, in: schema, "Finalizers")
        try Self.expectNamed(object.symbols, in: schema, "Symbols")
        try Self.expectNamed(report.totals, in: schema, "Totals")
        try Self.expectNamed(report.advice[0], in: schema, "Advice")
        try Self.expectNamed(report.missing[0], in: schema, "Missing")
        try Self.expectNamed(report.costModel, in: schema, "LaunchCostModel")
        try Self.expectNamed(LoaderWork(lookups: 3), in: schema, "LoaderWork")
        let calibration = LaunchCostModel.Calibration(
            cpu: "AMD EPYC", kernel: "6.18", measuredAt: "2026-11-23T18:07:44Z", rSquaredPermille: 999, worstErrorPercent: 7)
        try Self.expectNamed(calibration, in: schema, "Calibration")
        try SchemaValidator.expectValid(try report.jsonBytes(), against: .inspectReport, "constructed inspect report")
        var calibrated = report
        calibrated.costModel.calibration = calibration
        calibrated.totals.loaderWork = LoaderWork(mappedObjects: 1, segments: 4, relative: 9, lookups: 3)
        try SchemaValidator.expectValid(try calibrated.jsonBytes(), against: .inspectReport, "calibrated inspect report")
    }
}
