import LaunchprofReport

/// A histogram as MetricKit encodes one: fixed-width buckets, only the non-empty ones, indexed
/// from "0" in ascending order, bounds as strings with their unit (`"10 ms"`), counts as integers.
public struct MetricKitHistogram: Sendable, Equatable, Codable {
    public var histogramNumBuckets: Int
    /// Bucket index ("0", "1", …) → bucket.
    public var histogramValue: [String: Bucket]

    public struct Bucket: Sendable, Equatable, Codable {
        /// Inclusive lower bound, e.g. "10 ms".
        public var bucketStart: String
        /// Exclusive upper bound, e.g. "20 ms".
        public var bucketEnd: String
        public var bucketCount: Int

        public init(bucketStart: String, bucketEnd: String, bucketCount: Int) {
            self.bucketStart = bucketStart
            self.bucketEnd = bucketEnd
            self.bucketCount = bucketCount
        }
    }

    public init(buckets: [Bucket]) {
        histogramNumBuckets = buckets.count
        var value: [String: Bucket] = [:]
        for (index, bucket) in buckets.enumerated() { value[String(index)] = bucket }
        histogramValue = value
    }

    /// The histogram of `valuesNs` in buckets `bucketWidthMs` wide (a value on a bound goes to
    /// the bucket it starts); nil when there are no values, since MetricKit leaves an empty
    /// metric out.
    public init?(valuesNs: [UInt64], bucketWidthMs: UInt64) {
        guard !valuesNs.isEmpty, bucketWidthMs > 0 else { return nil }
        let widthNs = bucketWidthMs * 1_000_000
        var counts: [UInt64: Int] = [:]
        for value in valuesNs { counts[value / widthNs, default: 0] += 1 }
        self.init(
            buckets: counts.keys.sorted().map { index in
                Bucket(
                    bucketStart: "\(index * bucketWidthMs) ms", bucketEnd: "\((index + 1) * bucketWidthMs) ms",
                    bucketCount: counts[index] ?? 0)
            })
    }

    /// The buckets in index order.
    public var orderedBuckets: [Bucket] {
        (0..<histogramNumBuckets).compactMap { histogramValue[String($0)] }
    }

    /// Values counted in all buckets.
    public var totalCount: Int { histogramValue.values.reduce(0) { $0 + $1.bucketCount } }
}
