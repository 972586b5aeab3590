import Foundation

/// `monitor report --execs FILE`: the unwatched programs' execs (`--all`) per program, the most
/// exec'd first — how many, how they ended, and their time from the spawn to the marker (`main`,
/// or libc's start-up where libc's debug symbols were absent) as percentiles. The `top` programs
/// by count are listed; the rest are summed under `other`. What was not measured is said per
/// program: execs whose fork was not seen are counted but not timed.
public struct ExecSummary: Codable, Sendable, Equatable {
    public struct Program: Codable, Sendable, Equatable {
        public var program: String
        public var execs: Int
        /// By `ExecCensus.Record.Outcome` (reached, exited, replaced, not-seen).
        public var outcomes: [String: Int]
        /// Execs timed from their spawn to the marker.
        public var timed: Int
        public var timeToMarkerNs: Percentiles?
        /// Fork to exec done.
        public var execNs: Percentiles?
        /// Exec done to the exit, of those that exited before the marker (all that exited,
        /// without `--all-main`).
        public var toExitNs: Percentiles?
    }

    public struct Percentiles: Codable, Sendable, Equatable {
        public var p50: UInt64
        public var p90: UInt64
        public var max: UInt64

        init?(_ values: [UInt64]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            // Nearest rank.
            func rank(_ q: Double) -> UInt64 { sorted[Swift.max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1)] }
            p50 = rank(0.5)
            p90 = rank(0.9)
            max = sorted[sorted.count - 1]
        }
    }

    /// What the time runs to, for each marker the store's execs were recorded with.
    public var markers: [String: String]
    public var sinceUnixNs: Int64?
    public var programs: [Program]
    /// Programs beyond `top`, summed (nil when there are none).
    public var other: Program?
    public var notMeasured: [String]

    public static let notMeasuredText = [
        "unwatched execs have no loader phases, initializers, hooks or first frame: watch a program (--program) for those",
        "an exec whose fork was not seen (a process that exec'd twice, or forked before the monitor started) is counted, not timed",
        "outcome not-seen: no glibc start-up within the launch timeout (a static, Go or non-glibc program, or another libc than the system's), or still running then without --all-main",
        "without --all-main (marker none) no exec is timed to main",
    ]

    /// Summarises the store's execs since `sinceUnixNs`.
    public static func read(_ store: LaunchStore, sinceUnixNs: Int64, top: Int) throws -> ExecSummary {
        struct Accumulated {
            var execs = 0
            var outcomes: [String: Int] = [:]
            var toMarker: [UInt64] = []
            var exec: [UInt64] = []
            var toExit: [UInt64] = []
        }
        var byProgram: [String: Accumulated] = [:]
        var markers: Set<ExecCensus.Marker> = []
        try store.forEachExec(sinceUnixNs: sinceUnixNs) { exec in
            let record = exec.record
            markers.insert(exec.marker)
            var entry = byProgram[record.program] ?? Accumulated()
            entry.execs += 1
            entry.outcomes[record.outcome.rawValue, default: 0] += 1
            if let execNs = record.execNs {
                entry.exec.append(execNs)
                if let toMarker = record.toMarkerNs { entry.toMarker.append(execNs + toMarker) }
            }
            if let toExit = record.toExitNs { entry.toExit.append(toExit) }
            byProgram[record.program] = entry
        }
        let ranked = byProgram.sorted { ($0.value.execs, $1.key) > ($1.value.execs, $0.key) }
        func program(_ name: String, _ entry: Accumulated) -> Program {
            Program(
                program: name, execs: entry.execs, outcomes: entry.outcomes, timed: entry.toMarker.count,
                timeToMarkerNs: Percentiles(entry.toMarker), execNs: Percentiles(entry.exec), toExitNs: Percentiles(entry.toExit))
        }
        var rest = Accumulated()
        for (_, entry) in ranked.dropFirst(top) {
            rest.execs += entry.execs
            rest.outcomes.merge(entry.outcomes, uniquingKeysWith: +)
            rest.toMarker += entry.toMarker
            rest.exec += entry.exec
            rest.toExit += entry.toExit
        }
        return ExecSummary(
            markers: Dictionary(uniqueKeysWithValues: markers.map { ($0.rawValue, $0.meaning) }),
            sinceUnixNs: sinceUnixNs == .min ? nil : sinceUnixNs,
            programs: ranked.prefix(top).map { program($0.key, $0.value) },
            other: ranked.count > top ? program(FieldMetrics.otherPrograms, rest) : nil,
            notMeasured: notMeasuredText)
    }

    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(self)) + [0x0a]
    }
}
