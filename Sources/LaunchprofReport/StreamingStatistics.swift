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

    public init() {}

    public mutating func record(_ value: UInt64) {
        count += 1
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        let delta = Double(value) - mean
        mean += delta / Double(count)
        squaredDeviations += delta * (Double(value) - mean)
        // The histogram tracks up to UInt64.max / 2 ns (146 years): larger values are clamped.
        _ = histogram.record(Swift.min(value, UInt64.max / 4))
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

    /// Values outside Tukey's fences, counted from the histogram's buckets.
    private func outlierCount() -> Int {
        guard count >= 4 else { return 0 }
        let q1 = Double(percentile(25))
        let q3 = Double(percentile(75))
        let spread = 1.5 * (q3 - q1)
        var outside: UInt64 = 0
        let low = q1 - spread
        if low > Double(minimum), low >= 1 {
            outside += histogram.count(within: 0...(UInt64(low) - 1))
        }
        let high = q3 + spread
        if high < Double(maximum) {
            outside += histogram.count(within: (UInt64(high) + 1)...maximum)
        }
        return Int(outside)
    }

    private static func rounded(_ value: Double) -> UInt64 {
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(UInt64.max) ? UInt64.max : UInt64(value.rounded())
    }
}
