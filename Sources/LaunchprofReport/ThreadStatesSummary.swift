/// Thread states across a report's runs: each state's median over the launch, and each kind of
/// slow-launch reason with how many runs raised it.
public struct ThreadStatesSummary: Sendable, Equatable, Codable {
    /// Runs that recorded thread states.
    public var runs: Int
    /// Each state's median over the launch (spawn → first frame).
    public var launch: ThreadStateBreakdown
    /// One entry per reason code, most runs first (then most time).
    public var reasons: [Reason]

    public init(runs: Int, launch: ThreadStateBreakdown, reasons: [Reason]) {
        self.runs = runs
        self.launch = launch
        self.reasons = reasons
    }

    public struct Reason: Sendable, Equatable, Codable {
        public var code: SlowLaunchReason.Code
        /// Runs that raised it, and its median time over them.
        public var runs: Int
        public var medianNs: UInt64
        /// The latest run's message, threshold and advice.
        public var message: String
        public var threshold: String
        public var advice: String
        public var phase: String?

        public init(
            code: SlowLaunchReason.Code, runs: Int, medianNs: UInt64, message: String, threshold: String, advice: String,
            phase: String? = nil
        ) {
            self.code = code
            self.runs = runs
            self.medianNs = medianNs
            self.message = message
            self.threshold = threshold
            self.advice = advice
            self.phase = phase
        }
    }
}

/// Builds a `ThreadStatesSummary` one run at a time.
struct ThreadStatesSummaryBuilder: Sendable {
    private var runs = 0
    private var launch = StateStatistics()
    private var reasons: [SlowLaunchReason.Code: (statistics: StreamingStatistics, latest: SlowLaunchReason)] = [:]
    private var order: [SlowLaunchReason.Code] = []

    mutating func add(_ states: LaunchThreadStates) {
        runs += 1
        launch.record(states.launch)
        // A run may raise a code more than once (two processes waited for): its largest counts.
        var largest: [SlowLaunchReason.Code: SlowLaunchReason] = [:]
        for reason in states.reasons where (largest[reason.code]?.ns ?? 0) <= reason.ns { largest[reason.code] = reason }
        for (code, reason) in largest.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            var entry = reasons[code] ?? (StreamingStatistics(), reason)
            if reasons[code] == nil { order.append(code) }
            entry.statistics.record(reason.ns)
            entry.latest = reason
            reasons[code] = entry
        }
    }

    var summary: ThreadStatesSummary? {
        guard runs > 0, let medians = launch.medians else { return nil }
        let entries = order.compactMap { code -> ThreadStatesSummary.Reason? in
            guard let entry = reasons[code], let statistics = entry.statistics.summary else { return nil }
            return ThreadStatesSummary.Reason(
                code: code, runs: statistics.count, medianNs: statistics.median, message: entry.latest.message,
                threshold: entry.latest.threshold, advice: entry.latest.advice, phase: entry.latest.phase)
        }
        return ThreadStatesSummary(
            runs: runs, launch: medians,
            reasons: entries.sorted { ($0.runs, $0.medianNs) > ($1.runs, $1.medianNs) })
    }
}

/// Each state's streaming statistics.
struct StateStatistics: Sendable {
    private var states = [StreamingStatistics](repeating: StreamingStatistics(), count: ThreadState.allCases.count)

    mutating func record(_ breakdown: ThreadStateBreakdown) {
        for (slot, state) in ThreadState.allCases.enumerated() { states[slot].record(breakdown[state]) }
    }

    /// Each state's median; nil before the first record.
    var medians: ThreadStateBreakdown? {
        var result = ThreadStateBreakdown()
        for (slot, state) in ThreadState.allCases.enumerated() {
            guard let summary = states[slot].summary else { return nil }
            result[state] = summary.median
        }
        return result
    }
}
