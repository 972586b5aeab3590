import LaunchprofReport

/// The Hodges–Lehmann estimate of how far one sample is shifted from another, with the
/// distribution-free confidence interval that inverts the Mann–Whitney U test.
///
/// The shift is the median of every pairwise difference `new[j] − base[i]`; the interval runs
/// from the k-th smallest to the k-th largest of those differences, k chosen from U's null
/// distribution (normal approximation). It needs no assumption on the shape of the timings —
/// launch times are skewed, with a long tail from preemption — and one slow outlier moves it
/// by at most one of the n·m differences.
public enum HodgesLehmann {
    /// The estimated shift of `new` against `base`, in ns (positive: `new` is slower), and its
    /// interval. Nil when a side has no values.
    public static func shift(base: [UInt64], new: [UInt64], confidence: Double = 0.95) -> ShiftEstimate? {
        guard !base.isEmpty, !new.isEmpty else { return nil }
        // n·m differences: a merged report of many machines could need gigabytes. Past 1,024
        // runs a side stands in for itself by 1,024 evenly spaced order statistics — the same
        // distribution, and an interval computed as for 1,024 runs, so wider, never narrower.
        let base = thinned(base, to: maximumSampleCount)
        let new = thinned(new, to: maximumSampleCount)
        var differences: [Int64] = []
        differences.reserveCapacity(base.count * new.count)
        for b in base {
            let b = Int64(clamping: b)
            for n in new { differences.append(Int64(clamping: n) &- b) }
        }
        differences.sort()
        let total = differences.count
        let middle = total / 2
        let median = total % 2 == 1
            ? differences[middle]
            : differences[middle - 1] / 2 + differences[middle] / 2
                + (differences[middle - 1] % 2 + differences[middle] % 2) / 2
        let rank = intervalRank(base: base.count, new: new.count, confidence: confidence)
        guard rank >= 1 else {
            // Too few runs for the confidence asked: the widest interval there is, the range of
            // the differences, and the confidence it really has (U = 0 or U = n·m, each with
            // probability 1 / C(n + m, n), fall outside it).
            return ShiftEstimate(
                shiftNs: median, lowerNs: differences[0], upperNs: differences[total - 1],
                confidence: 1 - 2 / binomial(base.count + new.count, base.count))
        }
        return ShiftEstimate(
            shiftNs: median, lowerNs: differences[rank - 1], upperNs: differences[total - rank],
            confidence: confidence)
    }

    static let maximumSampleCount = 1_024

    static func thinned<Value: Comparable>(_ values: [Value], to count: Int) -> [Value] {
        guard values.count > count else { return values }
        let sorted = values.sorted()
        return (0..<count).map { sorted[$0 * sorted.count / count + sorted.count / (2 * count)] }
    }

    /// The 1-based rank k of the differences bounding the interval: the largest k with
    /// P(U < k) ≤ (1 − confidence) / 2 under the null hypothesis; 0 or less when there are too
    /// few runs for that confidence (3 + 3 at 95%: even the whole range holds only 90%).
    static func intervalRank(base n: Int, new m: Int, confidence: Double) -> Int {
        let mean = Double(n * m) / 2
        let deviation = (Double(n * m) * Double(n + m + 1) / 12).squareRoot()
        let z = standardNormalQuantile((1 + confidence) / 2)
        // Continuity correction: U is an integer.
        let k = Int((mean - z * deviation - 0.5).rounded(.down)) + 1
        return min(k, (n * m + 1) / 2)
    }

    /// C(n, k) as a Double (only reached with a handful of runs).
    static func binomial(_ n: Int, _ k: Int) -> Double {
        var result = 1.0
        for i in 0..<min(k, n - k) { result = result * Double(n - i) / Double(i + 1) }
        return result
    }

    /// Φ⁻¹(p) for p in (0.5, 1), without a math library: integrates the normal density
    /// φ' = −tφ from 0 with RK4 steps of 0.0005 until Φ reaches p (an error far below what a
    /// rank needs; it runs once per quantity compared).
    static func standardNormalQuantile(_ p: Double) -> Double {
        guard p > 0.5 else { return 0 }
        let step = 0.0005
        var t = 0.0
        var density = 1 / (2 * Double.pi).squareRoot()
        var cumulative = 0.5
        while t < 8 {
            // The density's own ODE, and the area under it, advanced together.
            func slope(_ t: Double, _ y: Double) -> Double { -t * y }
            let k1 = slope(t, density)
            let k2 = slope(t + step / 2, density + step / 2 * k1)
            let k3 = slope(t + step / 2, density + step / 2 * k2)
            let k4 = slope(t + step, density + step * k3)
            let next = density + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            // Simpson's rule on [t, t + step] with the midpoint density from the RK4 stages.
            let middle = density + step / 2 * (k1 + k2) / 2
            let area = step / 6 * (density + 4 * middle + next)
            if cumulative + area >= p {
                return t + step * (p - cumulative) / area
            }
            cumulative += area
            density = next
            t += step
        }
        return t
    }
}
