/// One launch compared with its baseline: every headline metric and phase duration (the shift
/// of the per-run samples, with its confidence interval), the deterministic counts exactly, and
/// the limits of a bench suite.
///
/// A quantity regressed when its confidence interval lies wholly above zero *and* the shift is
/// at least the minimum effect (relative to the base median, and in ns): the first condition
/// keeps noise quiet, the second keeps a real but negligible change quiet. Improvements are the
/// mirror image. A median over its `maxMedianNs` is a regression with or without a baseline.
public struct ReportComparison: Sendable, Equatable, Codable {
    /// The suite entry's name, or the new report's file.
    public var name: String
    public var base: Side?
    public var new: Side
    public var changes: [QuantityChange]
    public var counts: [CountChange]
    public var settings: ComparisonSettings
    public var verdict: ComparisonVerdict

    /// One side of the comparison, as the reports describe it.
    public struct Side: Sendable, Equatable, Codable {
        public var program: String
        public var buildID: String?
        public var runs: Int
        public var failedRuns: Int
        public var cold: Bool
        /// A `launchprof prewarm` report (its launches timed from the resume); nil otherwise.
        public var prewarm: Bool?
        /// How the runs that failed ended (issue 22), one entry per distinct outcome.
        public var failures: [LaunchSummary.OutcomeCount]?

        public init(program: String, buildID: String? = nil, runs: Int, failedRuns: Int, cold: Bool) {
            self.program = program
            self.buildID = buildID
            self.runs = runs
            self.failedRuns = failedRuns
            self.cold = cold
        }

        public init(_ report: LaunchReport) {
            program = report.target.path
            buildID = report.target.buildID
            runs = report.summary.runs
            failedRuns = report.summary.failedRuns
            cold = report.mode.cold
            prewarm = report.isPrewarm ? true : nil
            let failures = report.summary.outcomes?.filter { $0.outcome.kind != .completed } ?? []
            self.failures = failures.isEmpty ? nil : failures
        }
    }

    /// What happened to one metric or phase duration.
    public struct QuantityChange: Sendable, Equatable, Codable {
        /// `timeToFirstFrameNs`, `phase:didFinishLaunching`… (see `LaunchReport.samples()`).
        public var key: String
        public var baseMedianNs: UInt64?
        public var newMedianNs: UInt64?
        public var baseRuns: Int
        public var newRuns: Int
        /// (new median − base median) / base median, in percent.
        public var medianChangePercent: Double?
        /// Hodges–Lehmann shift of new against base, with its interval.
        public var shift: ShiftEstimate?
        /// The shift relative to the base median, in percent.
        public var shiftPercent: Double?
        /// Which statistic gave `shift`: `paired` (the runs of one `bench --rounds` session
        /// matched round by round; the Wilcoxon signed-rank interval of their differences) or
        /// `independent` (every run against every run; Mann–Whitney). Nil without a shift.
        public var statistic: Statistic?
        /// The pairs the paired statistic had (runs that succeeded on both sides of a round).
        public var pairs: Int?
        /// The quantity's key in the base report when it differs: a library at another path there
        /// (base and new built in two folders), compared as the same library.
        public var baseKey: String?
        public var verdict: Verdict
        /// Why, when the verdict is not `unchanged`.
        public var reason: String?

        public init(
            key: String, baseMedianNs: UInt64? = nil, newMedianNs: UInt64? = nil, baseRuns: Int, newRuns: Int,
            medianChangePercent: Double? = nil, shift: ShiftEstimate? = nil, shiftPercent: Double? = nil,
            verdict: Verdict, reason: String? = nil
        ) {
            self.key = key
            self.baseMedianNs = baseMedianNs
            self.newMedianNs = newMedianNs
            self.baseRuns = baseRuns
            self.newRuns = newRuns
            self.medianChangePercent = medianChangePercent
            self.shift = shift
            self.shiftPercent = shiftPercent
            self.verdict = verdict
            self.reason = reason
        }

        public enum Statistic: String, Sendable, Equatable, Codable, CaseIterable {
            case paired, independent
        }

        public enum Verdict: String, Sendable, Equatable, Codable, CaseIterable {
            case unchanged, improvement, regression
            /// Too few runs for the interval asked: the shift and the interval that could be
            /// computed are given, with its real (lower) confidence.
            case noVerdict
            /// Only in the new report / only in the base (not a verdict on speed).
            case added, removed
        }
    }

    /// A deterministic count compared exactly.
    public struct CountChange: Sendable, Equatable, Codable {
        public var name: String
        public var base: Int
        public var new: Int
        public var verdict: QuantityChange.Verdict

        public init(name: String, base: Int, new: Int, verdict: QuantityChange.Verdict) {
            self.name = name
            self.base = base
            self.new = new
            self.verdict = verdict
        }
    }

    public init(
        name: String, base: Side?, new: Side, changes: [QuantityChange], counts: [CountChange],
        settings: ComparisonSettings, verdict: ComparisonVerdict
    ) {
        self.name = name
        self.base = base
        self.new = new
        self.changes = changes
        self.counts = counts
        self.settings = settings
        self.verdict = verdict
    }

    /// A launch that could not be made at all (its program missing, say): failed, with why.
    public init(failedLaunch name: String, program: String, cold: Bool, reason: String, settings: ComparisonSettings) {
        self.name = name
        base = nil
        new = Side(program: program, runs: 0, failedRuns: 0, cold: cold)
        changes = [QuantityChange(key: "launch", baseRuns: 0, newRuns: 0, verdict: .regression, reason: reason)]
        counts = []
        self.settings = settings
        verdict = .failed
    }
}
