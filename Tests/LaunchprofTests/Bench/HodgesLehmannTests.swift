import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport

@Suite("compare: Hodges–Lehmann shift and its interval")
struct HodgesLehmannTests {
    @Test func constantOffsetIsTheShiftExactly() throws {
        let base: [UInt64] = [10_000, 12_000, 11_000, 15_000, 9_000]
        let estimate = try #require(HodgesLehmann.shift(base: base, new: base.map { $0 + 700 }))
        #expect(estimate.shiftNs == 700)
        #expect(estimate.lowerNs <= 700 && estimate.upperNs >= 700)
        let same = try #require(HodgesLehmann.shift(base: base, new: base))
        #expect(same.shiftNs == 0)
        #expect(same.lowerNs < 0 && same.upperNs > 0)
    }

    /// Beyond 1,024 runs a side is thinned to its order statistics: the estimate stays put.
    @Test func largeSamplesAreThinnedNotMisread() throws {
        let base = (0..<3_000).map { UInt64(1_000_000 + ($0 * 7_919) % 100_000) }
        let new = base.map { $0 + 30_000 }
        let estimate = try #require(HodgesLehmann.shift(base: base, new: new))
        #expect(abs(estimate.shiftNs - 30_000) <= 100, "\(estimate)")
        #expect(estimate.lowerNs > 20_000 && estimate.upperNs < 40_000, "\(estimate)")
        #expect(HodgesLehmann.thinned(base, to: 1_024).count == 1_024)
    }

    /// The normal quantile and the interval's rank against published values: Φ⁻¹(0.975) =
    /// 1.95996; the two-sided 5% critical U is 23 for 10 + 10 runs and 127 for 20 + 20, so the
    /// interval runs from the 24th (128th) smallest difference.
    @Test func ranksMatchTheMannWhitneyTables() {
        #expect(abs(HodgesLehmann.standardNormalQuantile(0.975) - 1.959964) < 1e-4)
        #expect(abs(HodgesLehmann.standardNormalQuantile(0.95) - 1.644854) < 1e-4)
        #expect(HodgesLehmann.intervalRank(base: 10, new: 10, confidence: 0.95) == 24)
        #expect(HodgesLehmann.intervalRank(base: 20, new: 20, confidence: 0.95) == 128)
        // 4 + 4 runs reach 95% only with the whole range (1 − 2/70); 3 + 3 cannot (1 − 2/20).
        #expect(HodgesLehmann.intervalRank(base: 4, new: 4, confidence: 0.95) == 1)
        #expect(HodgesLehmann.intervalRank(base: 3, new: 3, confidence: 0.95) < 1)
        let few = HodgesLehmann.shift(base: [10, 11, 12], new: [20, 21, 22])
        #expect(few?.confidence == 0.9)
        #expect(few?.lowerNs == 8 && few?.upperNs == 12)
    }

    /// Over 400 seeded draws of skewed samples (a long right tail, as launch times have), the
    /// 95% interval holds the true shift about 95% of the time: at least 90% here.
    @Test func intervalCoversTheTrueShift() throws {
        var generator = SeededGenerator(seed: 12)
        func draw() -> UInt64 {
            // Exponential tail on a 10 ms floor.
            let u = Double.random(in: 0.0001..<1, using: &generator)
            return 10_000_000 + UInt64(-2_000_000 * log(u))
        }
        var covered = 0
        let trials = 400
        for _ in 0..<trials {
            let base = (0..<20).map { _ in draw() }
            let new = (0..<20).map { _ in draw() + 1_000_000 }
            let estimate = try #require(HodgesLehmann.shift(base: base, new: new))
            if estimate.lowerNs <= 1_000_000 && 1_000_000 <= estimate.upperNs { covered += 1 }
        }
        #expect(covered >= trials * 90 / 100, "covered \(covered) of \(trials)")
        #expect(covered < trials, "an interval that always covers is too wide to be one")
    }

    /// ln for the test's draws, without a math library: atanh series.
    private func log(_ x: Double) -> Double {
        let y = (x - 1) / (x + 1)
        var term = y
        var sum = 0.0
        var k = 1.0
        while abs(term) > 1e-15 {
            sum += term / k
            term *= y * y
            k += 2
        }
        return 2 * sum
    }
}
