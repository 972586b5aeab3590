import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers

#if canImport(Glibc)
import Glibc
#endif

/// Stored launches as the launch report `launchprof run` writes, so `report --html`, `compare`,
/// `merge` and `export` read field data as they read lab data: the program as the target, the
/// host of its latest launch (`hosts` lists them all when there are several), one run per launch
/// in the order they started, and the summary of them all.
public enum FieldReport {
    /// What `mode` says of a field report: launches recorded, not made.
    static func mode(runs: Int, timeoutNs: UInt64?, startTypes: Set<FieldLaunchFacts.StartType>) -> LaunchReport.Mode {
        var mode = LaunchReport.Mode(runs: runs, warmup: 0, cold: false, readiness: .automatic, timeoutNs: timeoutNs)
        mode.observer = "monitor"
        let types = FieldLaunchFacts.StartType.allCases.filter(startTypes.contains).map(\.rawValue).joined(separator: ", ")
        mode.observerReason = "launches launchprof monitor recorded (start types: \(types))"
        return mode
    }

    /// The report of `selection`, every run in memory (for the page and the payloads).
    public static func report(_ store: LaunchStore, _ selection: LaunchStore.Selection, path: String) throws -> LaunchReport? {
        var runs: [LaunchRun] = []
        var hosts: [LaunchReport.Host] = []
        var buildID: String?
        try store.forEachLaunch(selection) { run, host, build in
            var run = run
            run.index = runs.count
            runs.append(run)
            if !hosts.contains(host) { hosts.append(host) }
            buildID = build ?? buildID
        }
        guard let host = hosts.last else { return nil }
        var report = LaunchReport(
            target: LaunchReport.Target(path: path, arguments: [], buildID: buildID), host: host,
            mode: mode(runs: runs.count, timeoutNs: nil, startTypes: selection.startTypes), runs: runs)
        if hosts.count > 1 { report.hosts = hosts }
        return report
    }

    /// Streams the report of `selection` into `output` run by run (memory stays flat however many
    /// launches); the number of runs written (0: nothing was written, the output discarded).
    public static func write(_ store: LaunchStore, _ selection: LaunchStore.Selection, path: String, to output: any ReportOutput) throws -> Int {
        let count = try store.count(selection)
        guard count > 0 else {
            output.discard()
            return 0
        }
        // The header names the latest launch's host and build.
        guard let latest = try store.latest(selection) else {
            output.discard()
            return 0
        }
        let writer = try LaunchReportWriter(
            output: output, target: LaunchReport.Target(path: path, arguments: [], buildID: latest.buildID), host: latest.host,
            mode: mode(runs: count, timeoutNs: nil, startTypes: selection.startTypes))
        var summary = LaunchSummaryBuilder()
        var index = 0
        do {
            try store.forEachLaunch(selection) { run, _, _ in
                guard index < count else { return }  // recorded since the count: left for the next report
                var run = run
                run.index = index
                index += 1
                try writer.append(run)
                summary.add(run)
            }
            try writer.finish(summary: summary.summary)
        } catch {
            writer.cancel()
            throw error
        }
        return index
    }
}

/// MetricKit's rhythm: once a UTC day is over, each program's launches of that day as a metric
/// payload and a diagnostic payload, in `STORE/metrickit/NAME/DAY/` (NAME: the program's file
/// name and a hash of its path). A launch brought to front counts as a resume, not a launch.
public enum FieldPayloads {
    public static let directoryName = "metrickit"

    /// Writes the payloads of every finished day not written yet.
    public static func writeFinishedDays(store: LaunchStore, programs: [String], nowUnixNs: Int64, retainNs: UInt64) throws {
        let today = nowUnixNs / 86_400_000_000_000
        for (program, day) in try store.daysWithoutPayloads(beforeUnixNs: today * 86_400_000_000_000) {
            let start = day * 86_400_000_000_000
            let selection = LaunchStore.Selection(program: program, sinceUnixNs: start, untilUnixNs: start + 86_400_000_000_000)
            guard var report = try FieldReport.report(store, selection, path: program) else { continue }
            report = countedAsResume(report)
            let dayText = MonitorTime.dayText(unixNs: start)
            let directory = store.directory + "/" + directoryName + "/" + folderName(program) + "/" + dayText
            try write(report, into: directory, beganAtSeconds: start / 1_000_000_000, endedAtSeconds: start / 1_000_000_000 + 86_399)
            _ = try store.markPayloads(program: program, day: dayText)
        }
    }

    /// A report's launches brought to front as MetricKit counts them (see `countedAsResume`).
    public static func countedAsResume(_ report: LaunchReport) -> LaunchReport {
        var report = report
        report.runs = report.runs.map(countedAsResume)
        return report
    }

    /// A launch brought to front as MetricKit counts it: its time goes to the resume histogram
    /// only.
    static func countedAsResume(_ run: LaunchRun) -> LaunchRun {
        guard run.field?.startType == .broughtToFront else { return run }
        var run = run
        run.metrics.timeToFirstFrameNs = nil
        run.metrics.optimizedTimeToFirstFrameNs = nil
        return run
    }

    /// `app-1f2e3d4c`: readable, and two programs of one name apart.
    public static func folderName(_ program: String) -> String {
        var hash: UInt32 = 0x811c_9dc5
        for byte in program.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        let name = WatchedProgram.fileName(program).filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }
        let hex = String(hash, radix: 16)
        return (name.isEmpty ? "program" : name) + "-" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Both payloads of `report` into `directory` (made with its parents, mode 0700).
    public static func write(_ report: LaunchReport, into directory: String, beganAtSeconds: Int64, endedAtSeconds: Int64) throws {
        var path = ""
        for part in directory.split(separator: "/") {
            path += "/" + part
            if mkdir(path, 0o700) != 0, errno != EEXIST {
                throw MonitorError.storeUnusable(path: path, reason: "the payloads' folder cannot be made (\(MonitorError.text(errno)))")
            }
        }
        let context = MetricKitPayloadBuilder.Context(
            distribution: PlatformFacts.distribution(), architecture: PlatformFacts.architecture(), regionFormat: nil,
            beganAtSeconds: beganAtSeconds, endedAtSeconds: endedAtSeconds)
        let payloads = try MetricKitPayloadBuilder(context: context).encodedPayloads(report)
        try ReportFiles.writeMetricKit(metrics: payloads.metrics, diagnostics: payloads.diagnostics, directory: directory)
    }
}
