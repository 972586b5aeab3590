/// What a comparison concluded, worst first when several are combined.
public enum ComparisonVerdict: String, Sendable, Equatable, Codable, Comparable, CaseIterable {
    /// Nothing changed beyond the minimum effect.
    case unchanged
    /// Nothing changed that could be judged, and some quantity had too few runs to judge.
    case noVerdict
    /// Something got faster (or smaller), nothing got slower.
    case improvement
    /// Something got slower, larger, or over its limit.
    case regression
    /// A launch failed: its figures cannot be trusted.
    case failed

    private var severity: Int {
        switch self {
        case .unchanged: 0
        case .noVerdict: 1
        case .improvement: 2
        case .regression: 3
        case .failed: 4
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.severity < rhs.severity }

    /// The verdict in words ("no verdict").
    public var text: String { self == .noVerdict ? "no verdict" : rawValue }

    /// The verdict in words where a side may lack a baseline: `unchanged` needs one; without it
    /// only the thresholds were checked ("within thresholds (no baseline)").
    public func text(hasBaseline: Bool) -> String {
        self == .unchanged && !hasBaseline ? "within thresholds (no baseline)" : text
    }

    /// The worst of several verdicts (`unchanged` for none).
    public static func combining(_ verdicts: some Sequence<ComparisonVerdict>) -> ComparisonVerdict {
        verdicts.max() ?? .unchanged
    }
}
