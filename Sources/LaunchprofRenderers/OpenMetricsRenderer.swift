import LaunchprofReport

/// `launchprof export --openmetrics`: the report as an OpenMetrics text exposition that
/// Prometheus scrapes or a Pushgateway accepts.
///
/// One summary family per headline metric (`launchprof_time_to_first_frame_seconds`…) and one
/// for phase durations (`launchprof_phase_duration_seconds`, labelled by phase, and object,
/// task, image, occurrence where a phase has them). Quantiles 0, 0.5, 0.9, 0.99 and 1 are the
/// report's min, median, p90, p99 and max; `_sum` is mean × count (exact to a ns per run).
/// Every sample carries program, build_id (when the executable has one), host and mode.
/// Seconds, the OpenMetrics base unit, printed from the integer ns without rounding.
public struct OpenMetricsRenderer: LaunchReportRenderer {
    public init() {}

    private static let metricFamilies: [(key: String, family: String, help: String)] = [
        ("timeToMainNs", "launchprof_time_to_main_seconds", "Time from the spawn to main."),
        ("timeToFirstFrameNs", "launchprof_time_to_first_frame_seconds", "Time from the spawn to the first frame (or readiness)."),
        ("extendedLaunchNs", "launchprof_extended_launch_seconds", "Time from the spawn to the end of the extended launch."),
        ("exitNs", "launchprof_exit_seconds", "Time from the spawn to the program's exit."),
        ("optimizedTimeToFirstFrameNs", "launchprof_optimized_time_to_first_frame_seconds", "A prewarmed launch: time from the resume to the first frame."),
        ("resumeTimeNs", "launchprof_resume_time_seconds", "Time from the foreground signal to didBecomeActive (median of a run's resume cycles)."),
    ]

    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        var labels: [(String, String)] = [("program", report.target.path)]
        if let buildID = report.target.buildID { labels.append(("build_id", buildID)) }
        let hosts = report.hosts ?? [report.host]
        labels.append(("host", hosts.map { $0.name ?? "unknown" }.joined(separator: ",")))
        let summary = report.summary
        // A prewarm report's launches are timed from the resume: not comparable with warm ones.
        let cache = report.mode.cold ? "cold" : "warm"
        labels.append(("mode", report.isPrewarm ? "prewarm" + (report.mode.cold ? ",cold" : "") : cache))

        let metricValues: [String: SummaryStatistics?] = [
            "timeToMainNs": summary.timeToMainNs, "timeToFirstFrameNs": summary.timeToFirstFrameNs,
            "extendedLaunchNs": summary.extendedLaunchNs, "exitNs": summary.exitNs,
            "optimizedTimeToFirstFrameNs": summary.optimizedTimeToFirstFrameNs,
            "resumeTimeNs": summary.resumeTimeNs,
        ]
        var lines: [String] = []
        lines += Self.runCounts(summary, labels)
        for (key, family, help) in Self.metricFamilies {
            guard let statistics = metricValues[key] ?? nil else { continue }
            lines += Self.header(family, help)
            lines += Self.summary(family, labels, statistics)
        }
        if let saving = summary.prewarm?.savingNs {
            let family = "launchprof_prewarm_saving_seconds"
            lines += Self.header(family, "Ordinary time to first frame minus the prewarmed launch's from the resume, per pair (a loss counts as 0).")
            lines += Self.summary(family, labels, saving)
        }
        if !summary.phases.isEmpty {
            let family = "launchprof_phase_duration_seconds"
            lines += Self.header(family, "Duration of one launch phase.")
            for phase in summary.phases {
                var phaseLabels = labels + [("phase", phase.name)]
                if let object = phase.object { phaseLabels.append(("object", object)) }
                if let task = phase.task { phaseLabels.append(("task", task)) }
                if let image = phase.image { phaseLabels.append(("image", String(image))) }
                if let occurrence = phase.occurrence { phaseLabels.append(("occurrence", String(occurrence))) }
                lines += Self.summary(family, phaseLabels, phase.durationNs)
            }
        }
        lines.append("# EOF")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `launchprof_runs_total{outcome=…}`: the runs by outcome, every outcome listed (0 when
    /// none), so a failure rate needs no absent series.
    private static func runCounts(_ summary: LaunchSummary, _ labels: [(String, String)]) -> [String] {
        let family = "launchprof_runs"
        var lines = ["# TYPE \(family) counter", "# HELP \(family) Measured runs by outcome (completed, or why not)."]
        var counts: [RunOutcome.Kind: Int] = [:]
        if let outcomes = summary.outcomes {
            for entry in outcomes { counts[entry.outcome.kind, default: 0] += entry.runs }
        } else {
            // A report written before outcomes: only completed or failed is known.
            counts[.completed] = summary.runs - summary.failedRuns
            if summary.failedRuns > 0 { lines.append("\(family)_total\(labelText(labels + [("outcome", "failed")])) \(summary.failedRuns)") }
        }
        for kind in RunOutcome.Kind.allCases {
            lines.append("\(family)_total\(labelText(labels + [("outcome", kind.metricLabel)])) \(counts[kind, default: 0])")
        }
        return lines
    }

    private static func header(_ family: String, _ help: String) -> [String] {
        ["# TYPE \(family) summary", "# UNIT \(family) seconds", "# HELP \(family) \(help)"]
    }

    private static func summary(_ family: String, _ labels: [(String, String)], _ statistics: SummaryStatistics) -> [String] {
        let quantiles: [(String, UInt64)] = [
            ("0", statistics.min), ("0.5", statistics.median), ("0.9", statistics.p90),
            ("0.99", statistics.p99), ("1", statistics.max),
        ]
        var lines = quantiles.map { quantile, ns in
            "\(family)\(labelText(labels + [("quantile", quantile)])) \(seconds(ns))"
        }
        lines.append("\(family)_count\(labelText(labels)) \(statistics.count)")
        let (sum, overflow) = statistics.mean.multipliedReportingOverflow(by: UInt64(statistics.count))
        lines.append("\(family)_sum\(labelText(labels)) \(seconds(overflow ? UInt64.max : sum))")
        return lines
    }

    private static func labelText(_ labels: [(String, String)]) -> String {
        "{" + labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
    }

    /// OpenMetrics label values escape backslash, double quote and line feed.
    static func escape(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// "1.234567890" from 1234567890 ns: exact, no exponent.
    static func seconds(_ ns: UInt64) -> String {
        let fraction = String(ns % 1_000_000_000)
        return "\(ns / 1_000_000_000)." + String(repeating: "0", count: 9 - fraction.count) + fraction
    }
}
