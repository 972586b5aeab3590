/// The one way launchprof spells a duration for people (and percentages beside them). Styles
/// differ by where the text goes: `text` for reports and advice, the truncating styles for the
/// inspect and calibration tables whose columns were laid out for them.
public enum DurationText {
    /// 812 ns, 41.2 µs, 3.45 ms, 1.23 s: three significant digits, rounded half up, exact
    /// (integer arithmetic).
    public static func text(_ ns: UInt64) -> String {
        if ns < 1_000 { return "\(ns) ns" }
        let units: [(UInt64, String)] = [(1_000, "µs"), (1_000_000, "ms"), (1_000_000_000, "s")]
        var chosen = units[0]
        for unit in units where ns >= unit.0 { chosen = unit }
        return decimal(ns, per: chosen.0) + " " + chosen.1
    }

    /// "+1.20 ms" / "-300 µs".
    public static func signed(_ ns: Int64) -> String {
        (ns < 0 ? "-" : "+") + text(ns.magnitude)
    }

    /// "12 µs" from `threshold` ns on (whole µs, truncated), "950 ns" below it.
    public static func wholeMicroseconds(_ ns: Int, from threshold: Int) -> String {
        ns >= threshold ? "\(ns / 1_000) µs" : "\(ns) ns"
    }

    /// "4.56 ms" (`decimals` digits, truncated) from 1 ms on, whole µs below: "870 µs".
    public static func truncatedMilliseconds(_ ns: Int, decimals: Int) -> String {
        guard ns >= 1_000_000 else { return "\(ns / 1_000) µs" }
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        let fraction = String(ns / (1_000_000 / scale) % scale)
        return "\(ns / 1_000_000)." + String(repeating: "0", count: decimals - fraction.count) + fraction
            + " ms"
    }

    /// Picoseconds, two decimals truncated: "1.25 µs" from 1 µs on, "812.40 ns" below.
    public static func picoseconds(_ ps: Int) -> String {
        if ps >= 1_000_000 { return "\(ps / 1_000_000).\(twoDigits(ps / 10_000 % 100)) µs" }
        return "\(ps / 1_000).\(twoDigits(ps % 1_000 / 10)) ns"
    }

    /// `value / unit` with three significant digits, rounded half up, in integer arithmetic (also
    /// for sizes: KiB, MiB).
    public static func decimal(_ value: UInt64, per unit: UInt64) -> String {
        let whole = value / unit
        guard value < UInt64.max / 1_000 else { return "\(whole)" }
        let decimals = whole >= 100 ? 0 : whole >= 10 ? 1 : 2
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * scale + unit / 2) / unit
        let integer = scaled / scale
        guard decimals > 0 else { return "\(integer)" }
        let fraction = String(scaled % scale)
        return "\(integer)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    public static func percent(_ value: Double) -> String {
        fixed(value) + "%"
    }

    public static func signedPercent(_ value: Double) -> String {
        (value < 0 ? "-" : "+") + fixed(abs(value)) + "%"
    }

    /// Three significant figures at most, without a locale.
    static func fixed(_ value: Double) -> String {
        let digits = value >= 100 ? 0 : value >= 10 ? 1 : 2
        let scale = digits == 0 ? 1.0 : digits == 1 ? 10.0 : 100.0
        let scaled = Int64((abs(value) * scale).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(scaled) }
        let whole = scaled / Int64(scale)
        let fraction = String(scaled % Int64(scale))
        return sign + "\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    private static func twoDigits(_ value: Int) -> String {
        let digits = String(value)
        return digits.count >= 2 ? digits : "0" + digits
    }
}
