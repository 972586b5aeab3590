import Histogram

/// Accumulates values one at a time in bounded memory: Welford's running mean and variance
/// (exact, numerically stable) and exact min/max always; percentiles and outlier fences exact
/// from the values themselves up to `exactLimit` of them, from an HDR histogram (3 significant
/// digits) beyond. Most sessions make tens to hundreds of runs: they get exact figures and
/// never pay for a histogram (allocating and scanning one costs about 0.5 ms, a report keeps
/// two per phase); a 100,000-run session still holds a fixed amount per statistic.
public struct StreamingStatistics: Sendable {
    public private(set) var count = 0
    private var minimum = UInt64.max
    private var maximum: UInt64 = 0
    private var mean = 0.0
    private var squaredDeviations = 0.0
    /// Every value while `count <= exactLimit`; emptied into `histogram` past it.
    private var values: [UInt64] = []
    private var histogram: Histogram<UInt32>?

    static let exactLimit = 2_048

    /// Values above this (2^38 ns, about 4.6 minutes) go into the histogram as this. No launch
    /// phase comes near it (runs time out long before); min, max and mean stay exact regardless,
    /// and percentiles are clamped into [min, max].
    static let histogramCeiling: UInt64 = 1 << 38

    public init() {}

    public mutating func record(_ value: UInt64) {
        count += 1
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        let delta = Double(value) - mean
        mean += delta / Double(count)
        squaredDeviations += delta * (Double(value) - mean)
        if histogram == nil, count <= Self.exactLimit {
            values.append(value)
            return
        }
        if histogram == nil {
            // A fixed range, allocated once: the library's auto-resizing growth to millisecond
            // values costs milliseconds per histogram.
            var fresh = Histogram<UInt32>(
                lowestDiscernibleValue: 1, highestTrackableValue: Self.histogramCeiling,
                numberOfSignificantValueDigits: .three)
            for earlier in values { _ = fresh.record(Swift.min(earlier, Self.histogramCeiling)) }
            values = []
            histogram = fresh
        }
        _ = histogram!.record(Swift.min(value, Self.histogramCeiling))
    }

    /// The summary so far; nil before the first value.
    public var summary: SummaryStatistics? {
        guard count > 0 else { return nil }
        let variance = count > 1 ? squaredDeviations / Double(count - 1) : 0
        // Values with their counts, ascending: the sorted values themselves, or the histogram's
        // recorded buckets (one pass answers every percentile; asking the histogram per
        // percentile scans all its buckets each time).
        let buckets: [(value: UInt64, count: UInt64)] =
            histogram.map { $0.recordedValues().map { (value: $0.value, count: UInt64($0.count)) } }
            ?? values.sorted().map { (value: $0, count: 1) }
        let total = buckets.reduce(0) { $0 + $1.count }
        func percentile(_ p: Double) -> UInt64 {
            // Nearest rank (the histogram's rule too), kept within the exact range.
            let rank = Swift.max(1, UInt64((p.nextDown * Double(total) / 100).rounded(.up)))
            var seen: UInt64 = 0
            for bucket in buckets {
                seen += bucket.count
                if seen >= rank { return Swift.min(Swift.max(bucket.value, minimum), maximum) }
            }
            return maximum
        }
        return SummaryStatistics(
            count: count, min: minimum, median: percentile(50), p90: percentile(90),
            p99: percentile(99), max: maximum, mean: Self.rounded(mean),
            stddev: Self.rounded(variance.squareRoot()),
            outliers: outlierCount(buckets, q1: percentile(25), q3: percentile(75)))
    }

    /// Values outside Tukey's fences, counted from the values or the histogram's buckets (each
    /// bucket's values are equivalent to 3 significant digits).
    private func outlierCount(_ buckets: [(value: UInt64, count: UInt64)], q1: UInt64, q3: UInt64) -> Int {
        guard count >= 4 else { return 0 }
        let spread = Double(q3) - Double(q1)
        let low = Double(q1) - 1.5 * spread
        let high = Double(q3) + 1.5 * spread
        var outside: UInt64 = 0
        for bucket in buckets {
            let value = Double(bucket.value)
            if value < low || value > high { outside += bucket.count }
        }
        return Int(outside)
    }

    private static func rounded(_ value: Double) -> UInt64 {
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(UInt64.max) ? UInt64.max : UInt64(value.rounded())
    }
}
