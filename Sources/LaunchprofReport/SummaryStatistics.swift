/// The distribution of one metric or phase duration across runs, in ns. `min`, `max`, `mean`
/// and `stddev` are exact; `median`, `p90`, `p99` come from an HDR histogram with 3 significant
/// digits (within 0.1% of the exact nearest-rank percentile). Field names are the report's
/// contract, so they carry no unit suffix: all are nanoseconds.
public struct SummaryStatistics: Sendable, Equatable, Codable {
    /// Runs that had this value.
    public var count: Int
    public var min: UInt64
    public var median: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var max: UInt64
    /// Rounded to the nearest ns.
    public var mean: UInt64
    /// Sample standard deviation (n − 1), rounded to the nearest ns; 0 for a single run.
    public var stddev: UInt64
    /// Runs outside Tukey's fences (1.5 interquartile ranges beyond the quartiles).
    public var outliers: Int

    public init(
        count: Int, min: UInt64, median: UInt64, p90: UInt64, p99: UInt64, max: UInt64,
        mean: UInt64, stddev: UInt64, outliers: Int
    ) {
        self.count = count
        self.min = min
        self.median = median
        self.p90 = p90
        self.p99 = p99
        self.max = max
        self.mean = mean
        self.stddev = stddev
        self.outliers = outliers
    }
}

/// `SummaryStatistics` of a value that may be negative, in ns: a prewarm saving, negative when
/// the prewarmed launch was slower. Same fields and rules; `stddev` stays non-negative.
public struct SignedSummaryStatistics: Sendable, Equatable, Codable {
    public var count: Int
    public var min: Int64
    public var median: Int64
    public var p90: Int64
    public var p99: Int64
    public var max: Int64
    public var mean: Int64
    public var stddev: UInt64
    public var outliers: Int

    public init(
        count: Int, min: Int64, median: Int64, p90: Int64, p99: Int64, max: Int64, mean: Int64,
        stddev: UInt64, outliers: Int
    ) {
        self.count = count
        self.min = min
        self.median = median
        self.p90 = p90
        self.p99 = p99
        self.max = max
        self.mean = mean
        self.stddev = stddev
        self.outliers = outliers
    }
}
