import LaunchprofReport

/// `launchprof merge`: one report from many machines' reports of the same program.
///
/// The runs are concatenated in argument order and re-indexed 0…n−1, and the summary is built
/// again from them, so every median and percentile is that of the pooled per-run samples (not
/// an average of medians). `hosts` lists each distinct machine once.
///
/// Same program means the same build: when the reports carry build-ids they must all match
/// (the path may differ from machine to machine); without build-ids the paths must match. A
/// merge of different builds would average a change away, so it is refused. The mode must
/// agree too (warm with cold, or different readiness rules, measure different things).
public enum ReportMerger {
    /// `named` pairs each report with the file it came from (for the error messages).
    public static func merge(_ named: [(path: String, report: LaunchReport)]) throws(LaunchReportError) -> LaunchReport {
        guard let (firstPath, first) = named.first else {
            throw .cannotMerge(reason: "no reports were given")
        }
        for (path, report) in named where report.runs.isEmpty {
            throw .cannotMerge(reason: "'\(path)' has no runs (its summary counts \(report.summary.runs)); there is nothing of it to pool")
        }
        // The same runs twice (one file named twice, or a copy) would count every run double.
        for (index, (path, report)) in named.enumerated() {
            if let (earlier, _) = named[..<index].first(where: { $0.report.runs == report.runs }) {
                throw .cannotMerge(reason: "'\(path)' holds the same runs as '\(earlier)' (the same report twice); pooling them would count every run twice")
            }
        }
        for (path, report) in named.dropFirst() {
            let a = first.target
            let b = report.target
            switch (a.buildID, b.buildID) {
            case let (x?, y?) where x != y:
                throw .cannotMerge(reason: "'\(path)' is of build \(y) of \(b.path), '\(firstPath)' of build \(x) of \(a.path); merge reports of one build, compare different builds with `launchprof compare`")
            case (nil, _), (_, nil):
                guard a.path == b.path else {
                    throw .cannotMerge(reason: "'\(path)' is of \(b.path), '\(firstPath)' of \(a.path), and without build-ids in both they cannot be told to be the same program")
                }
            default: break
            }
            guard a.arguments == b.arguments else {
                throw .cannotMerge(reason: "'\(path)' ran \(b.path) with other arguments than '\(firstPath)'")
            }
            guard report.mode.cold == first.mode.cold, report.mode.readiness == first.mode.readiness else {
                throw .cannotMerge(reason: "'\(path)' was measured \(describe(report.mode)), '\(firstPath)' \(describe(first.mode))")
            }
        }
        var runs: [LaunchRun] = []
        var hosts: [LaunchReport.Host] = []
        for (_, report) in named {
            for var run in report.runs {
                run.index = runs.count
                runs.append(run)
            }
            for host in report.hosts ?? [report.host] where !hosts.contains(host) {
                hosts.append(host)
            }
        }
        var mode = first.mode
        mode.runs = runs.count
        mode.warmup = named.map(\.report.mode.warmup).min() ?? 0
        var target = first.target
        if target.buildID == nil { target.buildID = named.lazy.compactMap(\.report.target.buildID).first }
        var merged = LaunchReport(target: target, host: first.host, mode: mode, runs: runs)
        merged.hosts = hosts.count > 1 ? hosts : nil
        return merged
    }

    private static func describe(_ mode: LaunchReport.Mode) -> String {
        "\(mode.cold ? "cold" : "warm") with --ready \(mode.readiness)"
    }
}
