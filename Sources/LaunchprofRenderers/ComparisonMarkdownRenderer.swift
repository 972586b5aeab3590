import LaunchprofReport

/// `compare --format markdown` and `bench --markdown`: a summary a CI job can post on a pull
/// request. Metrics and changed phases per entry; unchanged phases are left out.
public struct ComparisonMarkdownRenderer: ComparisonRenderer {
    public init() {}

    public func render(_ comparison: SuiteComparison) throws(LaunchReportError) -> String {
        let icon: String
        switch comparison.verdict {
        case .unchanged where !comparison.entries.contains { $0.base != nil }: icon = "No baseline: every launch within its thresholds"
        case .unchanged: icon = "No launch-time change"
        case .noVerdict: icon = "No verdict: too few runs"
        case .improvement: icon = "Launch time improved"
        case .regression: icon = "Launch-time regression"
        case .failed: icon = "A launch failed"
        }
        var lines = ["## launchprof: \(icon)", ""]
        for entry in comparison.entries {
            lines.append("### " + ComparisonRows.heading(entry).escapedForMarkdown)
            lines.append("")
            lines.append("| quantity | base | new | median Δ | shift [\(Int(entry.settings.confidence * 100))% CI] | verdict |")
            lines.append("|---|---:|---:|---:|---:|---|")
            for row in ComparisonRows.rows(entry, allPhases: false) {
                let verdict = row[5] == "regression" ? "**regression**" : row[5]
                let cells = [("`" + row[0] + "`")] + row[1..<5].map(\.escapedForMarkdown) + [verdict]
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
            if !entry.counts.isEmpty {
                lines.append("")
                lines.append("Counts: " + entry.counts.map { "\($0.name) \($0.base) → \($0.new)" + ($0.verdict == .unchanged ? "" : " (**\($0.verdict.rawValue)**)") }.joined(separator: ", "))
            }
            var reasons = entry.changes.filter { $0.verdict == .regression && !$0.key.hasPrefix("state:") }
                .compactMap { change in change.reason.map { "- `\(change.key)`: \($0.escapedForMarkdown)" } }
            let states = ComparisonRows.stateChanges(entry)
            if !states.isEmpty { reasons.append("- which states changed: " + states.joined(separator: ", ").escapedForMarkdown) }
            if let why = ComparisonRows.statesWithoutVerdict(entry) { reasons.append("- thread states: no verdict, \(why)") }
            if !reasons.isEmpty {
                lines.append("")
                lines += reasons
            }
            lines.append("")
        }
        for name in comparison.missing {
            lines.append("- `\(name)`: in the baseline only")
        }
        if !comparison.missing.isEmpty { lines.append("") }
        lines.append("Shifts are Hodges–Lehmann estimates over the per-run samples; a change counts when its interval excludes zero and it is at least the minimum effect.")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    /// Table cells must not contain a pipe.
    fileprivate var escapedForMarkdown: String {
        replacingOccurrences("|", with: "\\|")
    }

    private func replacingOccurrences(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
