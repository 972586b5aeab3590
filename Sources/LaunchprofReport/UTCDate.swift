/// A moment as a civil date and time in UTC, computed from the calendar directly (the proleptic
/// Gregorian calendar in eras of 400 years), so no locale or time zone database is involved:
/// MetricKit's timestamps and field launches' `startedAt` are written from it.
public struct UTCDate: Sendable, Equatable {
    public var year: Int64
    public var month: Int64
    public var day: Int64
    public var hour: Int64
    public var minute: Int64
    public var second: Int64

    public init(secondsSinceEpoch: Int64) {
        let days = secondsSinceEpoch >= 0 ? secondsSinceEpoch / 86_400 : (secondsSinceEpoch - 86_399) / 86_400
        let seconds = secondsSinceEpoch - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = seconds / 3_600
        minute = seconds / 60 % 60
        second = seconds % 60
    }

    /// `2026-12-02`.
    public var dayText: String { "\(year)-\(Self.two(month))-\(Self.two(day))" }

    /// `01:12:12`.
    public var timeText: String { "\(Self.two(hour)):\(Self.two(minute)):\(Self.two(second))" }

    static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
