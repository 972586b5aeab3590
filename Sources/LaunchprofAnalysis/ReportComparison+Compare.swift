import LaunchprofReport

extension ReportComparison {
    /// Compares `new` with `base` (nil: limits only): every quantity's shift and verdict, the
    /// counts exactly, and the verdict of the whole.
    public init(
        name: String, base: LaunchReport?, new: LaunchReport, baseCounts: LaunchCounts? = nil,
        newCounts: LaunchCounts? = nil, settings: ComparisonSettings = ComparisonSettings(),
        soname: (String) -> String? = { _ in nil }
    ) {
        // A library at another path in the base (built in another folder) is the same library:
        // its base keys are renamed to the new path, and the change remembers the base's key.
        let moved = base.map { Self.movedObjects(base: $0, new: new, soname: soname) } ?? [:]
        let newPathOfBase = Dictionary(uniqueKeysWithValues: moved.map { ($0.value, $0.key) })
        var baseKeys: [String: String] = [:]
        let baseSamples = Dictionary(uniqueKeysWithValues: (base?.samples() ?? []).map { sample in
            let key = Self.renamingMoved(sample.key, newPathOfBase)
            if key != sample.key { baseKeys[key] = sample.key }
            return (key, sample.valuesNs)
        })
        let newSamples = Dictionary(uniqueKeysWithValues: new.samples().map { ($0.key, $0.valuesNs) })
        var keys = Set(newSamples.keys)
        if base != nil { keys.formUnion(baseSamples.keys) }
        let isReference = settings.reference == name && settings.driftPercent != nil
        // `--statistic paired`: runs of one interleaved session pair up round by round (nil when
        // the reports are not of one session, or the independent statistic is asked for).
        let pairs = base.flatMap { base in
            settings.statistic == .paired
                ? LaunchReport.pairedSamples(base: base, new: new) { Self.renamingMoved($0, newPathOfBase) } : nil
        }
        // Thread states need them on both sides: a report without any (not root, or the kernel
        // dropped every run's records) gives no verdict on a state, not an added or removed one.
        let statesMissing = base.flatMap { base -> String? in
            let baseHas = base.runs.contains { $0.threadStates != nil }, newHas = new.runs.contains { $0.threadStates != nil }
            return baseHas == newHas ? nil : "no thread states in the \(baseHas ? "new" : "base") report"
        }
        let changes = keys.sorted(by: Self.order).map { key in
            var change = Self.change(
                key: key, base: base == nil ? nil : baseSamples[key] ?? [], new: newSamples[key] ?? [],
                pairs: pairs.map { $0[key] ?? [] }, settings: isReference ? settings.withoutDrift : settings)
            change.baseKey = baseKeys[key]
            if isReference, change.verdict == .regression || change.verdict == .improvement {
                // The reference did not change: its shift is the sessions' difference.
                change.verdict = .noVerdict
                change.reason = "the reference launch moved \(DurationText.signedPercent(change.shiftPercent ?? 0)): the two sessions differ by that much, not the program"
            } else if let statesMissing, key.hasPrefix("state:"), change.verdict == .added || change.verdict == .removed {
                change.verdict = .noVerdict
                change.reason = statesMissing
            }
            return change
        }
        var counts: [CountChange] = []
        if let baseCounts, let newCounts {
            counts = zip(baseCounts.named, newCounts.named).map { b, n in
                CountChange(
                    name: b.name, base: b.value, new: n.value,
                    verdict: n.value > b.value ? .regression : n.value < b.value ? .improvement : .unchanged)
            }
        }
        var verdicts = changes.compactMap { change -> ComparisonVerdict? in
            guard Self.gates(change.key, settings) else { return nil }
            return switch change.verdict {
            case .regression: .regression
            case .improvement: .improvement
            case .noVerdict: .noVerdict
            default: nil
            }
        }
        verdicts += counts.compactMap { $0.verdict == .regression ? .regression : $0.verdict == .improvement ? .improvement : nil }
        if new.summary.failedRuns > 0 || new.summary.runs == 0 { verdicts.append(.failed) }
        self.init(
            name: name, base: base.map(Side.init), new: Side(new), changes: changes, counts: counts,
            settings: settings, verdict: ComparisonVerdict.combining(verdicts))
    }

    /// Whether `key` decides the launch's verdict: a headline metric, a phase, or anything the
    /// suite sets a limit on (`thresholds`). Two kinds only explain: thread states (they add up
    /// to the phases, and a noisy host moves time between running and runnable) and the extended
    /// launch's tasks (background work after the first frame, judged as a whole by
    /// `extendedLaunchNs`: the demo's two tasks, each judged alone, flagged identical binaries in
    /// 2 of 20 trials).
    static func gates(_ key: String, _ settings: ComparisonSettings) -> Bool {
        if settings.thresholds[key] != nil { return true }
        return !key.hasPrefix("state:") && !key.hasPrefix("phase:" + LaunchPhase.extendedLaunch)
    }

    /// Metrics first, in the report's order, then phases and states by key.
    static func order(_ a: String, _ b: String) -> Bool {
        let metrics = LaunchMetrics().named.map(\.name)
        let ia = metrics.firstIndex(of: a) ?? metrics.count
        let ib = metrics.firstIndex(of: b) ?? metrics.count
        return ia != ib ? ia < ib : a < b
    }

    /// One quantity: `base` is nil when there is no baseline at all (limits only); `pairs` are its
    /// values in the runs of one interleaved session, matched round by round (nil when the
    /// reports are not of one session).
    static func change(
        key: String, base: [UInt64]?, new: [UInt64], pairs: [(base: UInt64, new: UInt64)]? = nil,
        settings: ComparisonSettings
    ) -> QuantityChange {
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
        let paired = pairs.flatMap { HodgesLehmann.pairedShift($0, confidence: settings.confidence) }
        guard let shift = paired ?? HodgesLehmann.shift(base: base, new: new, confidence: settings.confidence) else {
            return change
        }
        change.shift = shift
        change.statistic = paired == nil ? .independent : .paired
        change.pairs = paired == nil ? nil : pairs?.count
        let statistic = paired == nil ? "" : " (paired, \(pairs?.count ?? 0) rounds)"
        let percent = baseMedian > 0 ? Double(shift.shiftNs) / Double(baseMedian) * 100 : nil
        change.shiftPercent = percent
        guard change.verdict == .unchanged else { return change }
        guard shift.confidence >= settings.confidence else {
            change.verdict = .noVerdict
            let pairCount = pairs?.count ?? 0
            let sizes = paired == nil ? "\(base.count) and \(new.count)" : "\(pairCount) pair\(pairCount == 1 ? "" : "s")"
            change.reason = "too few runs for a \(Int(settings.confidence * 100))% interval (\(sizes)); the widest, [\(DurationText.signed(shift.lowerNs)), \(DurationText.signed(shift.upperNs))], is only \(DurationText.percent(shift.confidence * 100)) confident"
            return change
        }
        let minimumPercent = threshold?.maxRegressionPercent ?? settings.minEffectPercent
        let drift = abs(settings.driftPercent ?? 0)
        let size = shift.shiftNs.magnitude
        let largeEnough = size >= settings.minEffectNs && (percent.map { abs($0) >= minimumPercent + drift } ?? true)
        let interval = "\(DurationText.signed(shift.shiftNs)) [\(DurationText.signed(shift.lowerNs)), \(DurationText.signed(shift.upperNs))]"
        if drift > 0, shift.lowerNs > 0 || shift.upperNs < 0, !largeEnough, size >= settings.minEffectNs,
            let percent, abs(percent) >= minimumPercent
        {
            // Over the minimum effect, but not over it plus the drift: it may be the sessions'.
            change.verdict = .noVerdict
            change.reason = "\(DurationText.signedPercent(percent)) is within the sessions' drift: the reference launch '\(settings.reference ?? "")' moved \(DurationText.signedPercent(settings.driftPercent ?? 0)) between them, so a change must pass \(DurationText.percent(minimumPercent)) + \(DurationText.percent(drift))"
            return change
        }
        if shift.lowerNs > 0, largeEnough {
            change.verdict = .regression
            change.reason = "slower by \(interval) at \(Int(settings.confidence * 100))%\(statistic), over the \(DurationText.percent(minimumPercent)) minimum"
                + (drift > 0 ? " + \(DurationText.percent(drift)) drift" : "")
        } else if shift.upperNs < 0, largeEnough {
            change.verdict = .improvement
            change.reason = "faster by \(interval) at \(Int(settings.confidence * 100))%\(statistic)"
        }
        return change
    }

    /// The sessions' drift between `base` and `new`, from a launch that did not change: its largest
    /// Hodges–Lehmann shift over the headline metrics both have, in percent; nil with no such metric.
    public static func drift(base: LaunchReport, new: LaunchReport, settings: ComparisonSettings) -> Double? {
        let baseSamples = Dictionary(uniqueKeysWithValues: base.samples().map { ($0.key, $0.valuesNs) })
        let newSamples = Dictionary(uniqueKeysWithValues: new.samples().map { ($0.key, $0.valuesNs) })
        let shifts = LaunchMetrics().named.map(\.name).compactMap { key -> Double? in
            guard let b = baseSamples[key], let n = newSamples[key] else { return nil }
            return change(key: key, base: b, new: n, settings: settings.withoutDrift).shiftPercent
        }
        return shifts.max { abs($0) < abs($1) }
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

extension ComparisonSettings {
    /// These settings with no drift allowed for (the reference launch itself is judged so).
    var withoutDrift: ComparisonSettings {
        var settings = self
        settings.driftPercent = nil
        return settings
    }
}
