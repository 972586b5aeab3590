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
            let table = [header] + rows
            let widths = (0..<header.count).map { column in table.map { $0[column].count }.max() ?? 0 }
            for row in table {
                let cells = row.enumerated().map { index, cell in
                    index == 0 || index == row.count - 1
                        ? cell.padding(widths[index]) : String(repeating: " ", count: widths[index] - cell.count) + cell
                }
                lines.append("  " + cells.joined(separator: "  ").trailingSpacesRemoved)
            }
            if !entry.counts.isEmpty {
                lines.append("  counts: " + entry.counts.map { "\($0.name) \($0.base) → \($0.new)" + ($0.verdict == .unchanged ? "" : " (\($0.verdict.rawValue))") }.joined(separator: ", "))
            }
            for change in entry.changes where change.reason != nil && (change.verdict == .regression || change.verdict == .noVerdict && !change.key.hasPrefix("phase:")) {
                lines.append("  \(change.key): \(change.reason ?? "")")
            }
            lines.append("")
        }
        for name in comparison.missing {
            lines.append("\(name): in the baseline only")
        }
        lines.append("verdict: \(comparison.verdict.text)")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    fileprivate var trailingSpacesRemoved: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
