import LaunchprofReport

/// Makes a real run's report comparable with a golden file: times, pids, build ids, host facts
/// and directories are replaced, leaving the structure (phase names and order, objects' file
/// names, tasks, absent phases, warnings, exit statuses, metric presence) to compare.
enum ReportRedaction {
    static func redacted(_ report: LaunchReport) -> LaunchReport {
        var copy = report
        copy.target.path = fileName(report.target.path)
        copy.target.buildID = report.target.buildID.map { _ in "<build-id>" }
        copy.host = LaunchReport.Host(kernel: "<kernel>", cpu: "<cpu>", cores: 0, libc: "<libc>")
        copy.mode.timeoutNs = report.mode.timeoutNs.map { _ in 0 }
        copy.runs = report.runs.map(redacted)
        copy.summary = redacted(report.summary)
        return copy
    }

    static func redacted(_ run: LaunchRun) -> LaunchRun {
        var copy = run
        copy.pid = 0
        copy.phases = run.phases.map {
            LaunchPhase(
                name: $0.name, startNs: 0, durationNs: 0, object: $0.object.map(fileName),
                task: $0.task, image: $0.image)
        }
        copy.metrics = LaunchMetrics(
            timeToMainNs: run.metrics.timeToMainNs.map { _ in 0 },
            timeToFirstFrameNs: run.metrics.timeToFirstFrameNs.map { _ in 0 },
            extendedLaunchNs: run.metrics.extendedLaunchNs.map { _ in 0 },
            exitNs: run.metrics.exitNs.map { _ in 0 })
        copy.absent = run.absent.map {
            AbsentPhase(phase: $0.phase, reason: digitsRedacted($0.reason), image: $0.image)
        }
        copy.warnings = run.warnings.map { TimelineWarning($0.code, digitsRedacted($0.message)) }
        copy.residentBeforeBytes = run.residentBeforeBytes.map { _ in 0 }
        copy.closureBytes = run.closureBytes.map { _ in 0 }
        return copy
    }

    static func redacted(_ summary: LaunchSummary) -> LaunchSummary {
        func zero(_ statistics: SummaryStatistics?) -> SummaryStatistics? {
            statistics.map {
                SummaryStatistics(count: $0.count, min: 0, median: 0, p90: 0, p99: 0, max: 0, mean: 0, stddev: 0, outliers: 0)
            }
        }
        var copy = summary
        copy.timeToMainNs = zero(summary.timeToMainNs)
        copy.timeToFirstFrameNs = zero(summary.timeToFirstFrameNs)
        copy.extendedLaunchNs = zero(summary.extendedLaunchNs)
        copy.exitNs = zero(summary.exitNs)
        copy.phases = summary.phases.compactMap { phase in
            guard let start = zero(phase.startNs), let duration = zero(phase.durationNs) else { return nil }
            return PhaseSummary(
                name: phase.name, object: phase.object.map(fileName), task: phase.task, image: phase.image,
                occurrence: phase.occurrence, startNs: start, durationNs: duration)
        }
        return copy
    }

    static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Numbers in messages (times, pids) become "#".
    static func digitsRedacted(_ text: String) -> String {
        var result = ""
        var inNumber = false
        for character in text {
            if character.isASCII, character.isNumber {
                if !inNumber { result.append("#") }
                inNumber = true
            } else {
                inNumber = false
                result.append(character)
            }
        }
        return result
    }
}
