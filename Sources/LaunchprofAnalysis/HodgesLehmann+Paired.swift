import LaunchprofReport

extension HodgesLehmann {
    /// The Hodges–Lehmann estimate for paired measurements — the median of the Walsh averages
    /// (dᵢ + dⱼ)/2, i ≤ j, of the pairs' differences d = new − base — with the interval that
    /// inverts the Wilcoxon signed-rank test (Tukey's construction).
    ///
    /// For runs of two launches made side by side in one round (`bench --rounds`): what the
    /// round had in common — its CPU, the machine's load at that moment — cancels out of each
    /// difference. Nil when there are no pairs.
    public static func pairedShift(_ pairs: [(base: UInt64, new: UInt64)], confidence: Double = 0.95) -> ShiftEstimate? {
        guard !pairs.isEmpty else { return nil }
        // n(n+1)/2 Walsh averages: past 1,024 pairs the differences stand in for themselves by
        // 1,024 evenly spaced order statistics (an interval computed as for 1,024, so wider).
        let differences = thinned(pairs.map { Int64(clamping: $0.new) &- Int64(clamping: $0.base) }, to: maximumSampleCount)
        let n = differences.count
        // Sums, not averages: halved once at the end, so no rounding inside the order.
        var sums: [Int64] = []
        sums.reserveCapacity(n * (n + 1) / 2)
        for i in 0..<n {
            for j in i..<n { sums.append(differences[i] &+ differences[j]) }
        }
        sums.sort()
        let total = sums.count
        let middle = total / 2
        let middleSum = total % 2 == 1
            ? sums[middle]
            : sums[middle - 1] / 2 + sums[middle] / 2 + (sums[middle - 1] % 2 + sums[middle] % 2) / 2
        let median = middleSum / 2
        let rank = signedRankCriticalValue(pairs: n, confidence: confidence).map { $0 + 1 }
        guard let rank else {
            // Too few pairs for the confidence asked: the whole range, and its real confidence
            // (all signs positive or all negative, each 1 / 2ⁿ, fall outside it).
            return ShiftEstimate(
                shiftNs: median, lowerNs: sums[0] / 2, upperNs: sums[total - 1] / 2,
                confidence: 1 - 2 / Double(sign: .plus, exponent: n, significand: 1))
        }
        return ShiftEstimate(
            shiftNs: median, lowerNs: sums[rank - 1] / 2, upperNs: sums[total - rank] / 2, confidence: confidence)
    }

    /// The two-sided critical value of the Wilcoxon signed-rank statistic T for `pairs` pairs:
    /// the largest t with P(T ≤ t) ≤ (1 − confidence) / 2 under the null hypothesis (what the
    /// published tables list; 52 for 20 pairs at 95%). Nil when even T = 0 is more likely than
    /// that (5 pairs or fewer at 95%). Exact up to 300 pairs, the normal approximation with a
    /// continuity correction beyond.
    static func signedRankCriticalValue(pairs n: Int, confidence: Double) -> Int? {
        guard n > 0 else { return nil }
        let tail = (1 - confidence) / 2
        let maximum = n * (n + 1) / 2
        guard n <= 300 else {
            let mean = Double(maximum) / 2
            let deviation = (Double(n) * Double(n + 1) * Double(2 * n + 1) / 24).squareRoot()
            let t = Int((mean - standardNormalQuantile(1 - tail) * deviation - 0.5).rounded(.down))
            return t >= 0 ? t : nil
        }
        // P(T = t): each rank 1…n counted in T with probability ½, added one rank at a time.
        var probability = [Double](repeating: 0, count: maximum + 1)
        probability[0] = 1
        var reach = 0
        for rank in 1...n {
            reach += rank
            for t in stride(from: reach, through: 0, by: -1) {
                probability[t] = (probability[t] + (t >= rank ? probability[t - rank] : 0)) / 2
            }
        }
        var cumulative = 0.0
        var critical: Int?
        // A hair of slack: the table's boundary cases sum exactly to the tail in exact arithmetic.
        for t in 0...maximum {
            cumulative += probability[t]
            guard cumulative <= tail * (1 + 1e-9) else { break }
            critical = t
        }
        return critical
    }
}
