import LaunchprofReport

/// The cells shared by the text and markdown renderers.
enum ComparisonRows {
    static func heading(_ entry: ReportComparison) -> String {
        let cache = entry.new.cold ? "cold" : "warm"
        let mode = entry.new.prewarm == true ? "prewarm" + (entry.new.cold ? ", cold" : "") : cache
        let runs = entry.base.map { "\($0.runs) vs \(entry.new.runs) runs" } ?? "\(entry.new.runs) runs, no baseline"
        // How the failed runs ended, when the report says (issue 22).
        let failed = entry.new.failures.map { ", " + $0.map { "\($0.runs) \($0.outcome)" }.joined(separator: ", ") }
            ?? (entry.new.failedRuns > 0 ? ", \(entry.new.failedRuns) failed" : "")
        // The sessions' drift, when a reference launch measured it (docs/ci-regressions.md).
        let drift = entry.settings.driftPercent.map {
            entry.settings.reference == entry.name
                ? ", the reference launch" : ", sessions' drift \(DurationText.signedPercent($0)) on '\(entry.settings.reference ?? "")'"
        } ?? ""
        return "\(entry.name) (\(mode), \(runs)\(failed)\(drift)): \(entry.verdict.text(hasBaseline: entry.base != nil))"
    }

    /// A quantity with nothing to compare against is not "unchanged": within its limit when the
    /// suite sets one, else no baseline.
    private static func rowVerdict(_ change: ReportComparison.QuantityChange, _ entry: ReportComparison) -> String {
        guard entry.base == nil, change.verdict == .unchanged else {
            return change.verdict == .noVerdict ? "no verdict" : change.verdict.rawValue
        }
        return entry.settings.thresholds[change.key] == nil ? "no baseline" : "within limit"
    }

    /// A row's quantity: its key, or for a thread state "disk I/O in loader.map".
    static func quantity(_ key: String) -> String {
        guard let (state, phase) = LaunchReport.stateKeyParts(key) else { return key }
        return "\(state.label) in \(phase ?? "the launch")"
    }

    /// The thread states that moved (their rows), as "+18.0 ms disk I/O in loader.map".
    static func stateChanges(_ entry: ReportComparison) -> [String] {
        entry.changes.filter { $0.key.hasPrefix("state:") && ($0.verdict == .regression || $0.verdict == .improvement) }
            .compactMap { change in change.shift.map { "\(DurationText.signed($0.shiftNs)) \(quantity(change.key))" } }
    }

    /// Why the states have no verdict, once (each state row says the same).
    static func statesWithoutVerdict(_ entry: ReportComparison) -> String? {
        entry.changes.first { $0.key.hasPrefix("state:") && $0.verdict == .noVerdict && $0.reason?.hasPrefix("no thread states") == true }?.reason
    }

    /// Metrics always; phases that changed (all with `allPhases`); thread states that changed
    /// only (seven per phase would bury the rest).
    static func rows(_ entry: ReportComparison, allPhases: Bool) -> [[String]] {
        entry.changes.filter {
            if $0.key.hasPrefix("state:") { return $0.verdict == .regression || $0.verdict == .improvement }
            return allPhases || !$0.key.hasPrefix("phase:") || ($0.verdict != .unchanged && $0.verdict != .noVerdict)
        }.map { change in
            [
                // A library built in another folder for the base names where it was there.
                quantity(change.key) + (change.baseKey.map { " (base: \(quantity($0)))" } ?? ""),
                change.baseMedianNs.map(DurationText.text) ?? "-",
                change.newMedianNs.map(DurationText.text) ?? "-",
                change.medianChangePercent.map(DurationText.signedPercent) ?? "-",
                change.shift.map {
                    // An interval below the confidence asked says its own.
                    "\(DurationText.signed($0.shiftNs)) [\(DurationText.signed($0.lowerNs)), \(DurationText.signed($0.upperNs))]"
                        + ($0.confidence < entry.settings.confidence ? " at \(DurationText.percent($0.confidence * 100))" : "")
                        + (change.statistic == .paired ? " paired" : "")
                } ?? "-",
                rowVerdict(change, entry),
            ]
        }
    }
}
