import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport

@Suite("compare: the paired Hodges–Lehmann shift and its Wilcoxon signed-rank interval")
struct PairedShiftTests {
    /// The two-sided critical values of the signed-rank statistic T from the published tables
    /// (e.g. Wilcoxon, Katti & Wilcox 1963; any statistics textbook's appendix): at α = 0.05,
    /// none for 5 pairs, 0 for 6, … 52 for 20, 137 for 30; at α = 0.01, 0 for 8, 37 for 20.
    @Test func criticalValuesMatchTheSignedRankTables() {
        let five: [Int: Int?] = [5: nil, 6: 0, 7: 2, 8: 3, 9: 5, 10: 8, 15: 25, 20: 52, 25: 89, 30: 137]
        for (n, critical) in five {
            #expect(HodgesLehmann.signedRankCriticalValue(pairs: n, confidence: 0.95) == critical, "n = \(n)")
        }
        let one: [Int: Int?] = [7: nil, 8: 0, 9: 1, 10: 3, 15: 15, 20: 37]
        for (n, critical) in one {
            #expect(HodgesLehmann.signedRankCriticalValue(pairs: n, confidence: 0.99) == critical, "n = \(n)")
        }
        // Past 300 pairs, the normal approximation: n(n+1)/4 − 1.96·σ − ½, within a rank or two
        // of the exact value at the switch.
        let exact = HodgesLehmann.signedRankCriticalValue(pairs: 300, confidence: 0.95) ?? 0
        let approximate = HodgesLehmann.signedRankCriticalValue(pairs: 301, confidence: 0.95) ?? 0
        #expect(approximate > exact && approximate - exact < 320, "\(exact) → \(approximate)")
    }

    /// The estimate is the median of the Walsh averages: differences 100, 200, 400 ns have
    /// averages 100, 150, 200, 250, 300, 400, median 225; three pairs cannot reach 95%, so the
    /// interval is their whole range at its real confidence, 1 − 2/2³.
    @Test func estimateIsTheMedianOfTheWalshAverages() throws {
        let few = try #require(HodgesLehmann.pairedShift([(1_000, 1_100), (2_000, 2_200), (5_000, 5_400)]))
        #expect(few.shiftNs == 225)
        #expect(few.lowerNs == 100 && few.upperNs == 400)
        #expect(few.confidence == 0.75)
        #expect(HodgesLehmann.pairedShift([]) == nil)
    }

    /// Twenty pairs at 95%: the interval runs from the 53rd smallest to the 53rd largest of the
    /// 210 Walsh averages (the table's 52, plus one). Differences of 1…20 µs: the Walsh sums
    /// i + j (i ≤ j) equal to s number ⌊s/2⌋ for s ≤ 21, so 49 sums are ≤ 14 µs and 56 are
    /// ≤ 15 µs: the 53rd smallest average is 7.5 µs, the 53rd largest (by symmetry) 13.5 µs,
    /// the median 10.5 µs.
    @Test func twentyPairsUseTheTablesRank() throws {
        let pairs = (1...20).map { (base: UInt64(1_000_000), new: UInt64(1_000_000 + $0 * 1_000)) }
        let estimate = try #require(HodgesLehmann.pairedShift(pairs))
        #expect(estimate.shiftNs == 10_500)
        #expect(estimate.lowerNs == 7_500 && estimate.upperNs == 13_500, "\(estimate)")
        #expect(estimate.confidence == 0.95)
    }

    /// What pairing is for: each round's own speed (its CPU, the load at that moment) is shared
    /// by both of its runs. A 3% change under a round-to-round spread of ±20% is invisible to
    /// two independent samples and plain in the pairs.
    @Test func pairingRemovesWhatARoundSharesByBothRuns() throws {
        var generator = SeededGenerator(seed: 32)
        var pairs: [(base: UInt64, new: UInt64)] = []
        for _ in 0..<20 {
            let round = Double.random(in: 0.8..<1.2, using: &generator)
            let noise = { Double.random(in: 0.995..<1.005, using: &generator) }
            pairs.append((UInt64(1_000_000 * round * noise()), UInt64(1_030_000 * round * noise())))
        }
        let paired = try #require(HodgesLehmann.pairedShift(pairs))
        let independent = try #require(HodgesLehmann.shift(base: pairs.map(\.base), new: pairs.map(\.new)))
        #expect(paired.lowerNs > 0, "\(paired)")
        #expect(independent.lowerNs < 0, "\(independent)")
        #expect(abs(paired.shiftNs - 30_000) < 10_000, "\(paired)")
    }

    /// Over 400 seeded draws of 20 pairs with a skewed round effect and a skewed per-run tail,
    /// the 95% interval holds the true shift about 95% of the time: at least 90% here, and not
    /// always (an interval that always covers is too wide to be one).
    @Test func intervalCoversTheTrueShift() throws {
        var generator = SeededGenerator(seed: 7)
        func tail() -> UInt64 { UInt64(Double.random(in: 0..<1, using: &generator).squareRoot() * 400_000) }
        var covered = 0
        let trials = 400
        for _ in 0..<trials {
            let pairs = (0..<20).map { _ -> (base: UInt64, new: UInt64) in
                let round = UInt64.random(in: 0..<2_000_000, using: &generator)
                return (5_000_000 + round + tail(), 5_000_000 + round + tail() + 100_000)
            }
            let estimate = try #require(HodgesLehmann.pairedShift(pairs))
            if estimate.lowerNs <= 100_000 && 100_000 <= estimate.upperNs { covered += 1 }
        }
        #expect(covered >= trials * 90 / 100, "covered \(covered) of \(trials)")
        #expect(covered < trials)
    }
}
