import LaunchprofReport

/// `launchprof export --openmetrics` / `--prometheus`: a report as metric families for
/// Prometheus, written as OpenMetrics or the classic text format (`MetricsExposition`).
///
/// One summary family per headline metric (`launchprof_time_to_first_frame_seconds`…), one for
/// phase durations (`launchprof_phase_duration_seconds`, labelled by phase, and object, task,
/// image, occurrence where a phase has them) and one for the instants without a headline family
/// of their own (`launchprof_instant_seconds`: time from the spawn to `windowMapped` and to each
/// later image's `exec`; `main`, `firstFrame` and `exit` are the headline families). Quantiles
/// 0, 0.5, 0.9, 0.99 and 1 are the report's min, median, p90, p99 and max; `_sum` is mean ×
/// count (exact to a ns per run). Every sample carries program, build_id (when the executable
/// has one), host and mode. Seconds, the base unit, printed from the integer ns without rounding.
public struct MetricsRenderer: LaunchReportRenderer {
    public var format: ExpositionFormat

    public init(format: ExpositionFormat = .openMetrics) {
        self.format = format
    }

    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        Self.exposition(report).text(format)
    }

    /// The headline metrics, each a summary family of its own.
    private static func headlineFamilies(_ summary: LaunchSummary) -> [(statistics: SummaryStatistics?, family: String, help: String)] {
        [
            (summary.timeToMainNs, "launchprof_time_to_main_seconds", "Time from the spawn to main."),
            (summary.timeToFirstFrameNs, "launchprof_time_to_first_frame_seconds", "Time from the spawn to the first frame (or readiness)."),
            (summary.extendedLaunchNs, "launchprof_extended_launch_seconds", "Time from the spawn to the end of the extended launch."),
            (summary.exitNs, "launchprof_exit_seconds", "Time from the spawn to the program's exit."),
            (summary.optimizedTimeToFirstFrameNs, "launchprof_optimized_time_to_first_frame_seconds", "A prewarmed launch: time from the resume to the first frame."),
            (summary.resumeTimeNs, "launchprof_resume_time_seconds", "Time from the foreground signal to didBecomeActive (median of a run's resume cycles)."),
        ]
    }

    /// The report's metric families, in the order they are written.
    public static func exposition(_ report: LaunchReport) -> MetricsExposition {
        var labels: [(name: String, value: String)] = [("program", report.target.path)]
        if let buildID = report.target.buildID { labels.append(("build_id", buildID)) }
        let hosts = report.hosts ?? [report.host]
        labels.append(("host", hosts.map { $0.name ?? "unknown" }.joined(separator: ",")))
        let summary = report.summary
        // A prewarm report's launches are timed from the resume: not comparable with warm ones.
        let cache = report.mode.cold ? "cold" : "warm"
        labels.append(("mode", report.isPrewarm ? "prewarm" + (report.mode.cold ? ",cold" : "") : cache))

        var families = [runCounts(summary, labels)]
        for (statistics, name, help) in headlineFamilies(summary) {
            guard let statistics else { continue }
            families.append(MetricFamily(
                name: name, type: .summary, unit: "seconds", help: help, samples: samples(labels, statistics)))
        }
        if let prewarm = summary.prewarm, let saving = prewarm.savingNs {
            // Gauges, not a summary: a saving is negative where prewarming lost, and neither a
            // summary's quantiles nor its sum may be (OpenMetrics; Prometheus's parser refuses them).
            families.append(MetricFamily(
                name: "launchprof_prewarm_saving_seconds", type: .gauge, unit: "seconds",
                help: "Per pair in which both launches completed: ordinary time to first frame minus the prewarmed launch's from the resume, negative where prewarming lost; by statistic over the pairs.",
                samples: [("min", saving.min), ("median", saving.median), ("p90", saving.p90), ("p99", saving.p99), ("max", saving.max)]
                    .map { MetricSample(labels: labels + [("statistic", $0.0)], value: MetricsExposition.seconds(signed: $0.1)) }))
            families.append(MetricFamily(
                name: "launchprof_prewarm_pairs", type: .gauge,
                help: "Pairs in which both launches completed, by whether the prewarmed launch was slower (loss) or not (no_loss).",
                samples: [
                    MetricSample(labels: labels + [("result", "no_loss")], value: String(saving.count - prewarm.losses)),
                    MetricSample(labels: labels + [("result", "loss")], value: String(prewarm.losses)),
                ]))
        }
        var durations = MetricFamily(
            name: "launchprof_phase_duration_seconds", type: .summary, unit: "seconds", help: "Duration of one launch phase.")
        var instants = MetricFamily(
            name: "launchprof_instant_seconds", type: .summary, unit: "seconds",
            help: "Time from the spawn to an instant of the launch that has no family of its own (windowMapped, the exec of each later image).")
        for phase in summary.phases {
            var phaseLabels = labels
            if phase.isInstant {
                // main, firstFrame and exit are the headline families' values already.
                guard !headlineInstants.contains(phase.name) || phase.image != nil else { continue }
                phaseLabels.append(("instant", phase.name))
            } else {
                phaseLabels.append(("phase", phase.name))
            }
            if let object = phase.object { phaseLabels.append(("object", object)) }
            if let task = phase.task { phaseLabels.append(("task", task)) }
            if let image = phase.image { phaseLabels.append(("image", String(image))) }
            if let occurrence = phase.occurrence { phaseLabels.append(("occurrence", String(occurrence))) }
            if phase.isInstant {
                instants.samples += samples(phaseLabels, phase.startNs)
            } else {
                durations.samples += samples(phaseLabels, phase.durationNs)
            }
        }
        families += [durations, instants].filter { !$0.samples.isEmpty }
        return MetricsExposition(families: families)
    }

    /// Instants whose time from the spawn a headline family already gives (for image 0).
    private static let headlineInstants: Set<String> = [LaunchPhase.main, LaunchPhase.firstFrame, LaunchPhase.exit]

    /// `launchprof_runs_total{outcome=…}`: the runs by outcome, every outcome listed (0 when
    /// none), so a failure rate needs no absent series.
    private static func runCounts(_ summary: LaunchSummary, _ labels: [(name: String, value: String)]) -> MetricFamily {
        var family = MetricFamily(name: "launchprof_runs", type: .counter, help: "Measured runs by outcome (completed, or why not).")
        var counts: [RunOutcome.Kind: Int] = [:]
        if let outcomes = summary.outcomes {
            for entry in outcomes { counts[entry.outcome.kind, default: 0] += entry.runs }
        } else {
            // A report written before outcomes: only completed or failed is known.
            counts[.completed] = summary.runs - summary.failedRuns
            if summary.failedRuns > 0 {
                family.samples.append(MetricSample(suffix: "_total", labels: labels + [("outcome", "failed")], value: String(summary.failedRuns)))
            }
        }
        for kind in RunOutcome.Kind.allCases {
            family.samples.append(MetricSample(
                suffix: "_total", labels: labels + [("outcome", kind.metricLabel)], value: String(counts[kind, default: 0])))
        }
        return family
    }

    private static func quantileSamples(_ labels: [(name: String, value: String)], _ values: [(String, String)]) -> [MetricSample] {
        values.map { MetricSample(labels: labels + [("quantile", $0.0)], value: $0.1) }
    }

    private static func samples(_ labels: [(name: String, value: String)], _ statistics: SummaryStatistics) -> [MetricSample] {
        var samples = quantileSamples(labels, [
            ("0", statistics.min), ("0.5", statistics.median), ("0.9", statistics.p90), ("0.99", statistics.p99), ("1", statistics.max),
        ].map { ($0.0, MetricsExposition.seconds($0.1)) })
        samples.append(MetricSample(suffix: "_count", labels: labels, value: String(statistics.count)))
        let (sum, overflow) = statistics.mean.multipliedReportingOverflow(by: UInt64(statistics.count))
        samples.append(MetricSample(suffix: "_sum", labels: labels, value: MetricsExposition.seconds(overflow ? UInt64.max : sum)))
        return samples
    }
}
