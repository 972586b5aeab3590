import Histogram

/// Accumulates values one at a time in constant memory: Welford's running mean and variance
/// (exact, numerically stable), exact min/max, and an auto-resizing HDR histogram for
/// percentiles and outlier fences.
public struct StreamingStatistics: Sendable {
    public private(set) var count = 0
    private var minimum = UInt64.max
    private var maximum: UInt64 = 0
    private var mean = 0.0
    private var squaredDeviations = 0.0
    private var histogram = Histogram<UInt32>(numberOfSignificantValueDigits: .three)

    /// Values above this (2^44 ns, about 4.9 hours) go into the histogram as this: its iterators
    /// sum value × count in 64 bits, which must not overflow. No launch phase comes near it;
    /// min, max and mean stay exact regardless, and percentiles are clamped into [min, max].
    static let histogramCeiling: UInt64 = 1 << 44

    public init() {}

    public mutating func record(_ value: UInt64) {
        count += 1
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        let delta = Double(value) - mean
        mean += delta / Double(count)
        squaredDeviations += delta * (Double(value) - mean)
        _ = histogram.record(Swift.min(value, Self.histogramCeiling))
    }

    /// The summary so far; nil before the first value.
    public var summary: SummaryStatistics? {
        guard count > 0 else { return nil }
        let variance = count > 1 ? squaredDeviations / Double(count - 1) : 0
        return SummaryStatistics(
            count: count, min: minimum, median: percentile(50), p90: percentile(90),
            p99: percentile(99), max: maximum, mean: Self.rounded(mean),
            stddev: Self.rounded(variance.squareRoot()), outliers: outlierCount())
    }

    /// The histogram's nearest-rank percentile, kept within the exact range.
    private func percentile(_ p: Double) -> UInt64 {
        Swift.min(Swift.max(histogram.valueAtPercentile(p), minimum), maximum)
    }

    /// Values outside Tukey's fences, counted from the histogram's buckets (each bucket's
    /// values are equivalent to 3 significant digits).
    private func outlierCount() -> Int {
        guard count >= 4 else { return 0 }
        let q1 = Double(percentile(25))
        let q3 = Double(percentile(75))
        let low = q1 - 1.5 * (q3 - q1)
        let high = q3 + 1.5 * (q3 - q1)
        var outside: UInt64 = 0
        for bucket in histogram.recordedValues() {
            let value = Double(bucket.value)
            if value < low || value > high { outside += UInt64(bucket.count) }
        }
        return Int(outside)
    }

    private static func rounded(_ value: Double) -> UInt64 {
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(UInt64.max) ? UInt64.max : UInt64(value.rounded())
    }
}
