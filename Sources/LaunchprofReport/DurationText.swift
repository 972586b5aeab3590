/// Short human spellings of ns and percentages for the comparison renderers.
enum DurationText {
    /// 950 ns, 12.3 µs, 4.56 ms, 1.23 s.
    static func text(_ ns: UInt64) -> String {
        let value = Double(ns)
        switch ns {
        case ..<1_000: return "\(ns) ns"
        case ..<1_000_000: return fixed(value / 1e3) + " µs"
        case ..<1_000_000_000: return fixed(value / 1e6) + " ms"
        default: return fixed(value / 1e9) + " s"
        }
    }

    /// "+1.20 ms" / "-300 µs".
    static func signed(_ ns: Int64) -> String {
        (ns < 0 ? "-" : "+") + text(ns.magnitude)
    }

    static func percent(_ value: Double) -> String {
        fixed(value) + "%"
    }

    static func signedPercent(_ value: Double) -> String {
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
}
