/// A flag across a report's runs: how many runs raised it and how long it lasted.
public struct FlagSummary: Sendable, Equatable, Codable {
    public var kind: LaunchFlag.Kind
    public var phase: String
    public var function: String
    public var object: String
    public var syscall: String?
    /// The path of the first run's flag (see `LaunchFlag.path`).
    public var path: [String]?
    /// Runs in which the flag was raised.
    public var runs: Int
    public var durationNs: SummaryStatistics
    /// The advice of the run with the median duration's flag.
    public var advice: String

    /// `parse_catalog → crunch → now`: the path, else the function.
    public var chain: String { LaunchFlag.chain(function: function, path: path) }

    public init(
        kind: LaunchFlag.Kind, phase: String, function: String, object: String, syscall: String?,
        runs: Int, durationNs: SummaryStatistics, advice: String, path: [String]? = nil
    ) {
        self.path = path
        self.kind = kind
        self.phase = phase
        self.function = function
        self.object = object
        self.syscall = syscall
        self.runs = runs
        self.durationNs = durationNs
        self.advice = advice
    }
}

/// Accumulates flags run by run; memory grows with distinct flags, not runs.
struct FlagSummaryBuilder: Sendable {
    private struct Key: Hashable {
        var kind: LaunchFlag.Kind
        var phase: String
        var function: String
        var object: String
        var syscall: String?
    }

    private var order: [Key] = []
    private var entries: [Key: (runs: Int, durations: StreamingStatistics, advice: String, path: [String]?)] = [:]

    mutating func add(_ flags: [LaunchFlag]) {
        var seen = Set<Key>()
        for flag in flags {
            let key = Key(kind: flag.kind, phase: flag.phase, function: flag.function, object: flag.object, syscall: flag.syscall)
            var entry = entries[key] ?? (0, StreamingStatistics(), flag.advice, flag.path)
            if entries[key] == nil { order.append(key) }
            if seen.insert(key).inserted { entry.runs += 1 }
            entry.durations.record(flag.durationNs)
            entries[key] = entry
        }
    }

    var summaries: [FlagSummary]? {
        guard !order.isEmpty else { return nil }
        return order.compactMap { key in
            guard let entry = entries[key], let durations = entry.durations.summary else { return nil }
            return FlagSummary(
                kind: key.kind, phase: key.phase, function: key.function, object: key.object,
                syscall: key.syscall, runs: entry.runs, durationNs: durations, advice: entry.advice,
                path: entry.path)
        }
        .sorted { ($0.runs, $0.durationNs.median) > ($1.runs, $1.durationNs.median) }
    }
}
