/// The comparisons of a bench suite (or of one pair of reports), and what they add up to.
public struct SuiteComparison: Sendable, Equatable, Codable {
    /// Bumped on any incompatible change of `compare --format json`.
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var entries: [ReportComparison]
    /// Baseline entries the new run does not have (a renamed or dropped launch).
    public var missing: [String]
    public var verdict: ComparisonVerdict

    public init(entries: [ReportComparison], missing: [String] = []) {
        schemaVersion = Self.currentSchemaVersion
        self.entries = entries
        self.missing = missing
        verdict = ComparisonVerdict.combining(entries.map(\.verdict))
    }

    /// The verdict in words. Without any baseline (`bench` with no `--baseline`) nothing was
    /// compared: "unchanged" would claim a comparison, so it reads "within thresholds".
    public var verdictText: String {
        verdict.text(hasBaseline: entries.contains { $0.base != nil })
    }
}
