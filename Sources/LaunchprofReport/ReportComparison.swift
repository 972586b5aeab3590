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
    }

    public init(
        name: String, base: LaunchReport?, new: LaunchReport, baseCounts: LaunchCounts? = nil,
        newCounts: LaunchCounts? = nil, settings: ComparisonSettings = ComparisonSettings()
    ) {
        self.name = name
        self.base = base.map(Side.init)
        self.new = Side(new)
        self.settings = settings
        let baseSamples = Dictionary(uniqueKeysWithValues: (base?.samples() ?? []).map { ($0.key, $0.valuesNs) })
        let newSamples = Dictionary(uniqueKeysWithValues: new.samples().map { ($0.key, $0.valuesNs) })
        var keys = Set(newSamples.keys)
        if base != nil { keys.formUnion(baseSamples.keys) }
        changes = keys.sorted(by: Self.order).map { key in
            Self.change(
                key: key, base: base == nil ? nil : baseSamples[key] ?? [], new: newSamples[key] ?? [],
                settings: settings)
        }
        counts = []
        if let baseCounts, let newCounts {
            counts = zip(baseCounts.named, newCounts.named).map { b, n in
                CountChange(
                    name: b.name, base: b.value, new: n.value,
                    verdict: n.value > b.value ? .regression : n.value < b.value ? .improvement : .unchanged)
            }
        }
        var verdicts = changes.compactMap { change -> ComparisonVerdict? in
            switch change.verdict {
            case .regression: .regression
            case .improvement: .improvement
            case .noVerdict: .noVerdict
            default: nil
            }
        }
        verdicts += counts.compactMap { $0.verdict == .regression ? .regression : $0.verdict == .improvement ? .improvement : nil }
        if new.summary.failedRuns > 0 || new.summary.runs == 0 { verdicts.append(.failed) }
        verdict = ComparisonVerdict.combining(verdicts)
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

    /// Metrics first, in the report's order, then phases by key.
    static func order(_ a: String, _ b: String) -> Bool {
        let metrics = LaunchMetrics().named.map(\.name)
        let ia = metrics.firstIndex(of: a) ?? metrics.count
        let ib = metrics.firstIndex(of: b) ?? metrics.count
        return ia != ib ? ia < ib : a < b
    }

    /// One quantity: `base` is nil when there is no baseline at all (limits only).
    static func change(key: String, base: [UInt64]?, new: [UInt64], settings: ComparisonSettings) -> QuantityChange {
        let threshold = settings.thresholds[key]
        let baseMedian = base.flatMap(median)
        let newMedian = median(new)
        var change = QuantityChange(
            key: key, baseMedianNs: baseMedian, newMedianNs: newMedian, baseRuns: base?.count ?? 0,
            newRuns: new.count, verdict: .unchanged)
        if let limit = threshold?.maxMedianNs, let newMedian, newMedian > limit {
            change.verdict = .regression
            change.reason = "median \(DurationText.text(newMedian)) is over the limit \(DurationText.text(limit))"
        }
        guard let base else { return change }
        guard let baseMedian else {
            if change.verdict == .unchanged { change.verdict = .added }
            return change
        }
        guard let newMedian else {
            change.verdict = .removed
            return change
        }
        if baseMedian > 0 {
            change.medianChangePercent = (Double(newMedian) - Double(baseMedian)) / Double(baseMedian) * 100
        }
        guard let shift = HodgesLehmann.shift(base: base, new: new, confidence: settings.confidence) else {
            return change
        }
        change.shift = shift
        let percent = baseMedian > 0 ? Double(shift.shiftNs) / Double(baseMedian) * 100 : nil
        change.shiftPercent = percent
        guard change.verdict == .unchanged else { return change }
        guard shift.confidence >= settings.confidence else {
            change.verdict = .noVerdict
            change.reason = "too few runs for a \(Int(settings.confidence * 100))% interval (\(base.count) and \(new.count)); the widest, [\(DurationText.signed(shift.lowerNs)), \(DurationText.signed(shift.upperNs))], is only \(DurationText.percent(shift.confidence * 100)) confident"
            return change
        }
        let minimumPercent = threshold?.maxRegressionPercent ?? settings.minEffectPercent
        let size = shift.shiftNs.magnitude
        let largeEnough = size >= settings.minEffectNs && (percent.map { abs($0) >= minimumPercent } ?? true)
        let interval = "\(DurationText.signed(shift.shiftNs)) [\(DurationText.signed(shift.lowerNs)), \(DurationText.signed(shift.upperNs))]"
        if shift.lowerNs > 0, largeEnough {
            change.verdict = .regression
            change.reason = "slower by \(interval) at \(Int(settings.confidence * 100))%, over the \(DurationText.percent(minimumPercent)) minimum"
        } else if shift.upperNs < 0, largeEnough {
            change.verdict = .improvement
            change.reason = "faster by \(interval) at \(Int(settings.confidence * 100))%"
        }
        return change
    }

    /// The exact median (the mean of the middle two for an even count); nil for no values.
    static func median(_ values: [UInt64]) -> UInt64? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return sorted[middle] }
        return sorted[middle - 1] / 2 + sorted[middle] / 2 + (sorted[middle - 1] % 2 + sorted[middle] % 2) / 2
    }
}
