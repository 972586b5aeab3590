import LaunchprofReport

/// `compare`'s terminal table: per entry, every metric and every phase that changed (or all
/// phases with `allPhases`), then the counts.
public struct ComparisonTextRenderer: ComparisonRenderer {
    public var allPhases: Bool

    public init(allPhases: Bool = false) {
        self.allPhases = allPhases
    }

    public func render(_ comparison: SuiteComparison) throws(LaunchReportError) -> String {
        var lines: [String] = []
        for entry in comparison.entries {
            lines.append(ComparisonRows.heading(entry))
            let rows = ComparisonRows.rows(entry, allPhases: allPhases)
            let header = ["quantity", "base", "new", "median Δ", "shift [\(Int(entry.settings.confidence * 100))% CI]", "verdict"]
            // The figures right-aligned, the quantity and the verdict left.
            let table = TextTable(rows: [header] + rows, rightAligned: Set(1..<(header.count - 1)))
            lines += table.lines.map { "  " + $0 }
            if !entry.counts.isEmpty {
                lines.append("  counts: " + entry.counts.map { "\($0.name) \($0.base) → \($0.new)" + ($0.verdict == .unchanged ? "" : " (\($0.verdict.rawValue))") }.joined(separator: ", "))
            }
            for change in entry.changes where change.reason != nil && !change.key.hasPrefix("state:")
                && (change.verdict == .regression || change.verdict == .noVerdict && !change.key.hasPrefix("phase:"))
            {
                lines.append("  \(change.key): \(change.reason ?? "")")
            }
            let states = ComparisonRows.stateChanges(entry)
            if !states.isEmpty { lines.append("  which states changed: " + states.joined(separator: ", ")) }
            if let why = ComparisonRows.statesWithoutVerdict(entry) { lines.append("  thread states: no verdict, \(why)") }
            lines.append("")
        }
        for name in comparison.missing {
            lines.append("\(name): in the baseline only")
        }
        lines.append("verdict: \(comparison.verdictText)")
        return lines.joined(separator: "\n") + "\n"
    }
}
