import LaunchprofReport

/// The terminal view of a `launchprof prewarm` report: ordinary and prewarmed launches side by
/// side, the saving, the prewarm part and the hold apart, the frozen memory, the hazards.
public struct PrewarmTextRenderer: Sendable {
    public init() {}

    /// The session's view as `prewarm` prints it (from its summary alone).
    public func render(_ report: StreamedLaunchReport, hold: String, freezeAt: String) -> String {
        render(report.withRuns([]), hold: hold, freezeAt: freezeAt)
    }

    public func render(_ report: LaunchReport, hold: String, freezeAt: String) -> String {
        let summary = report.summary
        // Failures first, on stdout with the table: a failed pair has no saving.
        var failures = TextWaterfallRenderer.outcomeLines(summary, noun: "prewarmed launches")
        if let ordinary = summary.prewarm?.ordinaryOutcomes {
            failures += ordinary.filter { $0.outcome.kind != .completed }.map {
                "\($0.runs) of \(summary.runs) ordinary launches \($0.outcome)"
            }
        }
        guard let prewarm = summary.prewarm else {
            return (["\(report.target.path): no prewarmed launch was frozen at \(freezeAt)"] + failures)
                .joined(separator: "\n") + "\n"
        }
        func median(_ statistics: SummaryStatistics?) -> String {
            statistics.map { DurationText.text($0.median) } ?? "—"
        }
        func bytes(_ value: UInt64) -> String {
            value >= 1 << 20 ? DurationText.decimal(value, per: 1 << 20) + " MiB"
                : DurationText.decimal(value, per: 1 << 10) + " KiB"
        }
        var lines: [String] = []
        let point = freezeAt
        lines.append("\(report.target.path): \(summary.runs) prewarmed launches, each paired with an ordinary one; frozen at \(point), held \(hold)")
        lines += failures
        lines.append("")
        lines.append("                     ordinary launch       prewarmed launch (from the resume)")
        lines.append("time to first frame  " + TextTable.column(median(prewarm.ordinaryTimeToFirstFrameNs), 22) + median(summary.optimizedTimeToFirstFrameNs))
        if let saving = prewarm.savingNs {
            let value = { (ns: Int64) in ns < 0 ? DurationText.signed(ns) : DurationText.text(UInt64(ns)) }
            let spread = "p50 \(value(saving.median)), p90 \(value(saving.p90))"
            let lost = prewarm.losses > 0 ? "\(prewarm.losses) of \(saving.count) pair(s) slower prewarmed" : nil
            if saving.median > 0 {
                lines.append("saving               \(spread)" + (lost.map { " (\($0))" } ?? ""))
            } else if saving.median < 0 {
                // A loss is a loss: the prewarmed launch was slower at the median.
                lines.append("saving               none: a loss of \(DurationText.text(saving.median.magnitude)) at the median (\(spread))"
                    + (lost.map { "; \($0)" } ?? ""))
            } else {
                lines.append("saving               none at the median (\(spread))" + (lost.map { "; \($0)" } ?? ""))
            }
        } else {
            lines.append("saving               none: no pair in which both launches completed")
        }
        if prewarm.prewarmNs == nil, let pool = prewarm.pool {
            // Every launch missed the pool: nothing was prewarmed, so there is no part to show.
            let why = pool.expired > 0 ? ": every frozen process expired first (--ttl)" : ""
            lines.append("prewarm part         none: no launch found a frozen process (\(pool.hits) of \(pool.launches) hit)\(why)")
        } else {
            lines.append("prewarm part         " + median(prewarm.prewarmNs) + "  spawn → frozen, done before the user's tap")
            lines.append("hold                 " + median(prewarm.holdNs) + (prewarm.frozenCPURuns == 0
                ? "  no CPU used while frozen" : "  CPU used while frozen in \(prewarm.frozenCPURuns) run(s)!"))
        }
        if let pss = prewarm.frozenPSSBytes {
            lines.append("frozen memory        PSS median \(bytes(pss.median)) per process")
        }
        if let pool = prewarm.pool {
            lines.append("pool                 \(pool.size) process(es): \(pool.hits) of \(pool.launches) launches hit (\(pool.hitRatePerMille / 10).\(pool.hitRatePerMille % 10)%), \(pool.expired) expired"
                + (pool.heldPSSBytes.map { ", holding PSS \(bytes($0.median))" } ?? "")
                + (pool.refillNs.map { ", refill \(DurationText.text($0.median))" } ?? ""))
        }
        if let error = prewarm.hazardScanError {
            lines.append("hazards              not scanned: \(error)")
        } else if prewarm.hazards.isEmpty {
            lines.append("hazards              none: prewarm-safe")
        } else {
            let count = prewarm.hazards.filter { $0.severity == .hazard }.count
            let notes = prewarm.hazards.count - count
            let counts = (count > 0 ? ["\(count) hazard\(count == 1 ? "" : "s")"] : [])
                + (notes > 0 ? ["\(notes) note\(notes == 1 ? "" : "s")"] : [])
            let verdict = prewarm.prewarmSafe ? "prewarm-safe, " : ""
            lines.append("hazards              \(verdict)\(counts.joined(separator: ", ")) in the prewarm part:")
            for hazard in prewarm.hazards.sorted(by: { ($0.severity == .hazard ? 0 : 1) < ($1.severity == .hazard ? 0 : 1) }) {
                lines.append("  \(TextTable.column(hazard.severity.rawValue, 7))\(hazard.kind.rawValue): \(hazard.syscall) \(hazard.detail) from \(hazard.function) (\(hazard.object)): \(hazard.why)")
            }
        }
        // `--sample`: the prewarmed launches' heavy main-thread work (the hold is none of it).
        lines += TextWaterfallRenderer().sampledWorkLines(report)
        return lines.joined(separator: "\n") + "\n"
    }
}
