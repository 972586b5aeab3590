#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds (the clock launchprof and the fixtures use).
public func monotonicNs() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The median of some durations (the mean of the middle two for an even count).
public func median(_ values: [UInt64]) -> UInt64 {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Wall-clock ratios are recorded as integers in per-mille (1150 = 1.15×): package-benchmark's
/// metrics are integers.
public func perMille(_ numerator: UInt64, _ denominator: UInt64) -> Int {
    denominator == 0 ? 0 : Int((Double(numerator) / Double(denominator) * 1000).rounded())
}
