/// What a comparison concluded, worst first when several are combined.
public enum ComparisonVerdict: String, Sendable, Equatable, Codable, Comparable, CaseIterable {
    /// Nothing changed beyond the minimum effect.
    case unchanged
    /// Something got faster (or smaller), nothing got slower.
    case improvement
    /// Something got slower, larger, or over its limit.
    case regression
    /// A launch failed: its figures cannot be trusted.
    case failed

    private var severity: Int {
        switch self {
        case .unchanged: 0
        case .improvement: 1
        case .regression: 2
        case .failed: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.severity < rhs.severity }

    /// `bench` and `compare` exit with: 0 unchanged, 4 only improvements, 2 a regression,
    /// 1 a launch failed.
    public var exitCode: Int32 {
        switch self {
        case .unchanged: 0
        case .improvement: 4
        case .regression: 2
        case .failed: 1
        }
    }

    /// The worst of several verdicts (`unchanged` for none).
    public static func combining(_ verdicts: some Sequence<ComparisonVerdict>) -> ComparisonVerdict {
        verdicts.max() ?? .unchanged
    }
}
