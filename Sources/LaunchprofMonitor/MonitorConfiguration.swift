import LaunchprofReport

/// What `launchprof monitor` was asked to do.
public struct MonitorConfiguration: Sendable {
    /// The store directory.
    public var store: String
    /// `--program PATH`, each watched for its launches' phases.
    public var programs: [String]
    /// `--loader-phases`: probe the loader and the programs' libraries too (every process on the
    /// machine that maps them pays a probe hit).
    public var loaderPhases = false
    /// `--all`: every other program's exec too (`ExecCensus`): its exec time and how it ended.
    public var all = false
    /// `--all-main`: and its time to `main`, from one uprobe in libc every glibc process hits.
    public var allMain = false
    /// `--display`: displays watched from the start.
    public var displays: [String] = []
    /// `--metrics-listen ADDRESS:PORT`.
    public var metricsListen: String?
    /// `--metrics-token-file`: else STORE/metrics.token.
    public var metricsTokenFile: String?
    /// `--retain`: launches older than this are deleted.
    public var retainNs: UInt64 = 30 * 86_400 * 1_000_000_000
    /// `--launch-timeout`: a launch with neither a first frame nor an exit by then times out.
    public var launchTimeoutNs: UInt64 = 60 * 1_000_000_000
    /// How often the loop wakes with nothing to read (launch timeouts, the store's commits).
    public var tickNs: UInt64 = 250_000_000

    public init(store: String, programs: [String]) {
        self.store = store
        self.programs = programs
    }
}

/// Durations and times as the monitor's options take them.
public enum MonitorTime {
    /// `30d`, `12h`, `15m`, `45s`, `500ms` as ns; nil for anything else (or zero).
    public static func duration(_ text: String) -> UInt64? {
        let units: [(String, UInt64)] = [("ms", 1_000_000), ("d", 86_400_000_000_000), ("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy(\.isNumber), let value = UInt64(number), value > 0,
                value <= UInt64.max / scale
            else { return nil }
            return value * scale
        }
        return nil
    }

    /// `--since`: a duration back from `nowUnixNs` (`7d`), or a day (`2026-12-01`, UTC midnight),
    /// as Unix ns; nil for anything else.
    public static func since(_ text: String, nowUnixNs: Int64) -> Int64? {
        if let duration = duration(text) { return nowUnixNs - Int64(clamping: duration) }
        return day(text).map { $0 * 86_400 * 1_000_000_000 }
    }

    /// `YYYY-MM-DD` as days since the Unix epoch.
    static func day(_ text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
            (1...12).contains(month), (1...31).contains(day), year >= 1970
        else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The UTC day of a Unix time, `YYYY-MM-DD`.
    public static func dayText(unixNs: Int64) -> String {
        UTCDate(secondsSinceEpoch: unixNs >= 0 ? unixNs / 1_000_000_000 : (unixNs - 999_999_999) / 1_000_000_000).dayText
    }
}
