/// What a launch recorded by `launchprof monitor` (one launchprof did not start) adds to its run:
/// how it started, when on the wall clock, and when it was resumed if it was frozen first.
public struct FieldLaunchFacts: Sendable, Equatable, Codable {
    /// How the launch's process came to be, as Android vitals and Sentry tell launches apart:
    /// only a cold launch paid for a new process's exec, loader and initializers.
    public enum StartType: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
        /// A new process exec'd the program.
        case cold
        /// Forked from a running instance of the program, without an exec (a zygote or
        /// fork server): its pre-main work was done before.
        case forked
        /// Launched earlier, frozen (stopped) before its first frame and resumed: the part
        /// before the freeze was prewarming.
        case resumed
        /// A new process of the program handed over to an instance already running (a
        /// single-instance app raising its window) and ended without a frame of its own.
        case broughtToFront

        /// The label value in Prometheus metrics (`start_type="brought_to_front"`).
        public var metricLabel: String {
            switch self {
            case .cold: "cold"
            case .forked: "forked"
            case .resumed: "resumed"
            case .broughtToFront: "brought_to_front"
            }
        }
    }

    public var startType: StartType
    /// The spawn on the wall clock, ISO 8601 in UTC to the millisecond
    /// (`2026-12-02T01:12:12.755Z`): a number of ns since the epoch is past what JSON readers
    /// hold exactly.
    public var startedAt: String
    /// `resumed`: when the process was let run again, ns from the spawn.
    public var resumedAtNs: UInt64?

    public init(startType: StartType, startedAt: String, resumedAtNs: UInt64? = nil) {
        self.startType = startType
        self.startedAt = startedAt
        self.resumedAtNs = resumedAtNs
    }

    /// `2026-12-02T01:12:12.755Z` for a time in ns since the Unix epoch.
    public static func isoTime(unixNs: Int64) -> String {
        let seconds = unixNs >= 0 ? unixNs / 1_000_000_000 : (unixNs - 999_999_999) / 1_000_000_000
        let milliseconds = String((unixNs - seconds * 1_000_000_000) / 1_000_000)
        let date = UTCDate(secondsSinceEpoch: seconds)
        return date.dayText + "T" + date.timeText + "." + String(repeating: "0", count: 3 - milliseconds.count) + milliseconds + "Z"
    }
}
