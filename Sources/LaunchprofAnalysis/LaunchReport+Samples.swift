import LaunchprofReport

extension LaunchReport {
    /// Each compared quantity's per-run values, from the runs that succeeded: the headline
    /// metrics under their names (`timeToFirstFrameNs`), phase durations under `phase:` keys
    /// (see `phaseKey`). Sorted by key.
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
                record(Self.phaseKey(phase, occurrence: occurrence), phase.durationNs)
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
}
