/// How `compare` decides: the interval's confidence, the smallest change worth reporting, and
/// per-quantity limits (from a bench suite's thresholds).
public struct ComparisonSettings: Sendable, Equatable, Codable {
    /// Confidence of the Hodges–Lehmann interval, e.g. 0.95.
    public var confidence: Double
    /// The smallest shift, relative to the base median, that counts as a change (5 = 5%).
    public var minEffectPercent: Double
    /// The smallest shift in ns that counts as a change, whatever its relative size: keeps
    /// microsecond phases from flagging on scheduler noise.
    public var minEffectNs: UInt64
    /// Limits per quantity, keyed like `LaunchReport.samples()` (`timeToFirstFrameNs`,
    /// `phase:didFinishLaunching`).
    public var thresholds: [String: Threshold]
    /// A bench suite's reference launch (its name): a program that is the same in both sessions
    /// — `/bin/true`, or a fixed copy of the app — so that compared across sessions its shift is
    /// the sessions' drift, not a change.
    public var reference: String?
    /// The sessions' drift this comparison allowed for: the reference launch's largest shift
    /// between the two sessions over its headline metrics, in percent (signed). Every other
    /// quantity's minimum effect is widened by its size; absent when no reference was compared.
    public var driftPercent: Double?
    /// `paired` (`compare --statistic paired`): runs of one interleaved bench session are matched
    /// round by round and judged on their differences (Wilcoxon signed-rank); nil or
    /// `independent`: the two sides as independent samples (Mann–Whitney), the default — on the
    /// trials of docs/ci-regressions.md pairing caught no more and widened CPU-bound phases.
    public var statistic: StatisticChoice?

    public enum StatisticChoice: String, Sendable, Equatable, Codable, CaseIterable {
        case independent, paired
    }

    public init(
        confidence: Double = 0.95, minEffectPercent: Double = 5, minEffectNs: UInt64 = 100_000,
        thresholds: [String: Threshold] = [:]
    ) {
        self.confidence = confidence
        self.minEffectPercent = minEffectPercent
        self.minEffectNs = minEffectNs
        self.thresholds = thresholds
    }

    /// A limit on one quantity.
    public struct Threshold: Sendable, Equatable, Codable {
        /// The new median may not exceed this, baseline or not.
        public var maxMedianNs: UInt64?
        /// The largest shift against the baseline tolerated, in percent of the base median:
        /// this quantity's minimum effect size (instead of `minEffectPercent`).
        public var maxRegressionPercent: Double?

        public init(maxMedianNs: UInt64? = nil, maxRegressionPercent: Double? = nil) {
            self.maxMedianNs = maxMedianNs
            self.maxRegressionPercent = maxRegressionPercent
        }
    }
}
