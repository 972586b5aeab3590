import LaunchprofReport

extension LaunchReport {
    /// Each compared quantity's per-run values, from the runs that succeeded: the headline
    /// metrics under their names (`timeToFirstFrameNs`), phase durations under `phase:` keys
    /// (see `phaseKey`), and the main thread's time in each state over the launch and in each
    /// phase under `state:` keys (see `stateKey`), from the runs that recorded thread states.
    /// Sorted by key.
    public func samples() -> [(key: String, valuesNs: [UInt64])] {
        var byKey: [String: [UInt64]] = [:]
        for run in runs where !run.failed {
            for (key, value) in Self.values(of: run) { byKey[key, default: []].append(value) }
        }
        return byKey.keys.sorted().map { ($0, byKey[$0] ?? []) }
    }

    /// One run's value of every quantity `samples()` collects, under the same keys.
    public static func values(of run: LaunchRun) -> [(key: String, valueNs: UInt64)] {
        var values: [(key: String, valueNs: UInt64)] = []
        for metric in run.metrics.named {
            if let value = metric.valueNs { values.append((metric.name, value)) }
        }
        var seen: [String: Int] = [:]
        for phase in run.phases {
            let base = phaseKey(phase, occurrence: nil)
            let occurrence = seen[base, default: 0]
            seen[base] = occurrence + 1
            let key = phaseKey(phase, occurrence: occurrence)
            values.append((key, phase.durationNs))
            if let states = phase.threadState {
                for state in ThreadState.allCases { values.append((stateKey(state, phaseKey: key), states[state])) }
            }
        }
        if let launch = run.threadStates?.launch {
            for state in ThreadState.allCases { values.append((stateKey(state, phaseKey: nil), launch[state])) }
        }
        return values
    }

    /// The runs of `base` and `new` made side by side — the same `bench --rounds` session and
    /// round (the k-th run of a round with the k-th, when a round made several) — each pair's
    /// values by key, for the quantities both runs have. Nil when the reports are not of one
    /// interleaved session: a run without a session or round, on either side, or
    /// no round in common.
    /// `baseKey` renames the base's keys (a library that moved to another folder).
    public static func pairedSamples(
        base: LaunchReport, new: LaunchReport, baseKey: (String) -> String = { $0 }
    ) -> [String: [(base: UInt64, new: UInt64)]]? {
        struct Slot: Hashable {
            var session: String
            var round: Int
            var occurrence: Int
        }
        func slots(_ report: LaunchReport) -> [Slot: LaunchRun]? {
            var slots: [Slot: LaunchRun] = [:]
            var seen: [String: Int] = [:]
            for run in report.runs.sorted(by: { $0.index < $1.index }) {
                guard let session = run.session, let round = run.round else { return nil }
                let place = "\(session)/\(round)"
                let occurrence = seen[place, default: 0]
                seen[place] = occurrence + 1
                // A failed run keeps its place (the k-th of its round), but has nothing to pair.
                if !run.failed { slots[Slot(session: session, round: round, occurrence: occurrence)] = run }
            }
            return slots
        }
        guard let baseSlots = slots(base), let newSlots = slots(new) else { return nil }
        var pairs: [String: [(base: UInt64, new: UInt64)]] = [:]
        var paired = false
        for (slot, newRun) in newSlots.sorted(by: { ($0.key.session, $0.key.round, $0.key.occurrence) < ($1.key.session, $1.key.round, $1.key.occurrence) }) {
            guard let baseRun = baseSlots[slot] else { continue }
            paired = true
            let baseValues = Dictionary(values(of: baseRun).map { (baseKey($0.key), $0.valueNs) }, uniquingKeysWith: { a, _ in a })
            for (key, value) in values(of: newRun) {
                if let baseValue = baseValues[key] { pairs[key, default: []].append((baseValue, value)) }
            }
        }
        return paired ? pairs : nil
    }

    /// `phase:NAME`, then `[object]`, `{task}`, `@image` and `#occurrence` when set (the second
    /// phase of the same name in a run is `#1`): what tells phases apart in a summary.
    public static func phaseKey(_ phase: LaunchPhase, occurrence: Int?) -> String {
        var key = "phase:" + phase.name
        if let object = phase.object { key += "[\(object)]" }
        if let task = phase.task { key += "{\(task)}" }
        if let image = phase.image { key += "@\(image)" }
        if let occurrence, occurrence > 0 { key += "#\(occurrence)" }
        return key
    }

    /// `state:diskIO` (the launch's), `state:diskIO/phase:loader.map` (a phase's, after its
    /// `phaseKey`): the main thread's time in one state.
    public static func stateKey(_ state: ThreadState, phaseKey: String?) -> String {
        "state:" + state.rawValue + (phaseKey.map { "/" + $0 } ?? "")
    }

    /// The state and the phase (its key's name part; nil for the launch) of a `state:` key.
    public static func stateKeyParts(_ key: String) -> (state: ThreadState, phase: String?)? {
        guard key.hasPrefix("state:") else { return nil }
        let rest = key.dropFirst(6)
        let slash = rest.firstIndex(of: "/")
        guard let state = ThreadState(rawValue: String(rest[..<(slash ?? rest.endIndex)])) else { return nil }
        return (state, slash.map { String(rest[rest.index(after: $0)...].dropFirst(6)) })
    }
}
