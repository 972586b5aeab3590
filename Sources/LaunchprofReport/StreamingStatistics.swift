import Histogram

/// Accumulates values one at a time in bounded memory: Welford's running mean and variance
/// (exact, numerically stable) and exact min/max always; percentiles and outlier fences exact
/// from the values themselves up to `exactLimit` of them, from an HDR histogram (3 significant
/// digits) beyond. Most sessions make tens to hundreds of runs: they get exact figures and
/// never pay for a histogram (allocating and scanning one costs about 0.5 ms, a report keeps
/// two per phase); a 100,000-run session still holds a fixed amount per statistic.
public struct StreamingStatistics: Sendable {
    private var exact = ExactMoments<UInt64>()
    public var count: Int { exact.count }
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
        exact.record(value)
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
        let ranked = RankedValues(buckets: buckets, minimum: exact.minimum, maximum: exact.maximum)
        return SummaryStatistics(
            count: count, min: exact.minimum, median: ranked.percentile(50), p90: ranked.percentile(90),
            p99: ranked.percentile(99), max: exact.maximum, mean: Self.rounded(exact.mean),
            stddev: Self.rounded(exact.variance.squareRoot()), outliers: ranked.outliers())
    }

    /// Values with their counts, ascending: the sorted values themselves, or the histogram's
    /// recorded buckets (one pass answers every percentile; asking the histogram per percentile
    /// scans all its buckets each time).
    var buckets: [(value: UInt64, count: UInt64)] {
        histogram.map { $0.recordedValues().map { (value: $0.value, count: UInt64($0.count)) } }
            ?? values.sorted().map { (value: $0, count: 1) }
    }

    static func rounded(_ value: Double) -> UInt64 {
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(UInt64.max) ? UInt64.max : UInt64(value.rounded())
    }
}

/// What a stream's statistics keep exactly: the count, the minimum and maximum, and Welford's
/// running mean and variance (numerically stable).
struct ExactMoments<Value: FixedWidthInteger & Sendable>: Sendable {
    private(set) var count = 0
    private(set) var minimum = Value.max
    private(set) var maximum = Value.min
    private(set) var mean = 0.0
    private var squaredDeviations = 0.0

    mutating func record(_ value: Value) {
        count += 1
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        let delta = Double(value) - mean
        mean += delta / Double(count)
        squaredDeviations += delta * (Double(value) - mean)
    }

    /// The sample variance (n − 1); 0 for one value.
    var variance: Double { count > 1 ? squaredDeviations / Double(count - 1) : 0 }
}

/// Values with their counts, ascending, and the exact minimum and maximum: percentiles by
/// nearest rank and Tukey's outliers, for the unsigned and the signed accumulator alike.
struct RankedValues<Value: BinaryInteger> {
    var buckets: [(value: Value, count: UInt64)]
    var minimum: Value
    var maximum: Value

    var total: UInt64 { buckets.reduce(0) { $0 + $1.count } }

    /// Nearest rank (the histogram's rule too), kept within the exact range.
    func percentile(_ p: Double) -> Value {
        let rank = Swift.max(1, UInt64((p.nextDown * Double(total) / 100).rounded(.up)))
        var seen: UInt64 = 0
        for bucket in buckets {
            seen += bucket.count
            if seen >= rank { return Swift.min(Swift.max(bucket.value, minimum), maximum) }
        }
        return maximum
    }

    /// Values outside Tukey's fences (1.5 interquartile ranges beyond the quartiles), counted
    /// from the values or the histogram's buckets (each bucket's values are equivalent to 3
    /// significant digits); none below 4 values.
    func outliers() -> Int {
        guard total >= 4 else { return 0 }
        let q1 = Double(percentile(25)), q3 = Double(percentile(75))
        let low = q1 - 1.5 * (q3 - q1), high = q3 + 1.5 * (q3 - q1)
        var outside: UInt64 = 0
        for bucket in buckets where Double(bucket.value) < low || Double(bucket.value) > high {
            outside += bucket.count
        }
        return Int(outside)
    }
}

/// `StreamingStatistics` for values that may be negative (a prewarm saving is negative when
/// prewarming lost): the magnitudes of the negative values and the others are kept apart, in
/// the same bounded memory, and read as one ascending list.
public struct SignedStreamingStatistics: Sendable {
    private var negative = StreamingStatistics()
    private var positive = StreamingStatistics()
    private var exact = ExactMoments<Int64>()
    public var count: Int { exact.count }

    public init() {}

    public mutating func record(_ value: Int64) {
        exact.record(value)
        if value < 0 { negative.record(value.magnitude) } else { positive.record(UInt64(value)) }
    }

    /// The summary so far; nil before the first value.
    public var summary: SignedSummaryStatistics? {
        guard count > 0 else { return nil }
        let buckets = negative.buckets.reversed().map { (value: -Int64(clamping: $0.value), count: $0.count) }
            + positive.buckets.map { (value: Int64(clamping: $0.value), count: $0.count) }
        let ranked = RankedValues(buckets: buckets, minimum: exact.minimum, maximum: exact.maximum)
        // The mean lies between the exact minimum and maximum, so it fits.
        let mean = exact.mean.isFinite ? Int64(exactly: exact.mean.rounded()) ?? 0 : 0
        return SignedSummaryStatistics(
            count: count, min: exact.minimum, median: ranked.percentile(50), p90: ranked.percentile(90),
            p99: ranked.percentile(99), max: exact.maximum, mean: mean,
            stddev: StreamingStatistics.rounded(exact.variance.squareRoot()), outliers: ranked.outliers())
    }
}
