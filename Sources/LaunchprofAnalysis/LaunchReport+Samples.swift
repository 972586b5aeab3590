import LaunchprofReport

extension LaunchReport {
    /// Each compared quantity's per-run values, from the runs that succeeded: the headline
    /// metrics under their names (`timeToFirstFrameNs`), phase durations under `phase:` keys
    /// (see `phaseKey`), and the main thread's time in each state over the launch and in each
    /// phase under `state:` keys (see `stateKey`), from the runs that recorded thread states.
    /// Sorted by key.
    public func samples() -> [(key: String, valuesNs: [UInt64])] {
        var byKey: [String: [UInt64]] = [:]
        var order: [String] = []
        func record(_ key: String, _ value: UInt64) {
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(value)
        }
        for run in runs where !run.failed {
            for metric in run.metrics.named {
                if let value = metric.valueNs { record(metric.name, value) }
            }
            var seen: [String: Int] = [:]
            for phase in run.phases {
                let base = Self.phaseKey(phase, occurrence: nil)
                let occurrence = seen[base, default: 0]
                seen[base] = occurrence + 1
                let key = Self.phaseKey(phase, occurrence: occurrence)
                record(key, phase.durationNs)
                if let states = phase.threadState {
                    for state in ThreadState.allCases { record(Self.stateKey(state, phaseKey: key), states[state]) }
                }
            }
            if let launch = run.threadStates?.launch {
                for state in ThreadState.allCases { record(Self.stateKey(state, phaseKey: nil), launch[state]) }
            }
        }
        return order.sorted().map { ($0, byKey[$0] ?? []) }
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
