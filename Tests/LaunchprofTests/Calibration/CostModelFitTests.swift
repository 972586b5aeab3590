import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// The least-squares solver on plain values: exact data gives back its coefficients, unit
/// costs never come out negative, collinear terms do not stop the fit.
@Suite("Calibration: least squares")
struct CostModelFitTests {
    /// Deterministic pseudo-random counts (a linear congruential generator).
    struct Counts {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15

        mutating func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Int((state >> 33) % UInt64(range.count))
        }

        mutating func work(segmentsPerObject: Int? = nil) -> LoaderWork {
            let objects = next(0...60)
            let lookups = next(0...20_000)
            let tablePages = next(0...900)
            return LoaderWork(
                mappedObjects: objects, segments: segmentsPerObject.map { $0 * objects } ?? next(0...240),
                relative: next(0...150_000), lookups: lookups, scopeSteps: lookups * next(1...40),
                pagesTouched: next(0...3_000), versionChecks: next(0...600), symbolTablePages: tablePages,
                symbolTableFaults: tablePages / next(1...16))
        }
    }

    static let truth = [300_000_000, 30_000_000, 2_000_000, 6_000, 150_000, 10_000, 2_000_000, 1_000_000, 200_000, 2_500_000]

    static func points(_ count: Int, coefficients: [Int], segmentsPerObject: Int? = nil) -> [CostModelFit.Point] {
        var counts = Counts()
        let model = LaunchCostModel.standard.with(coefficientsPs: coefficients, source: "test", calibration: nil)
        return (0..<count).map { index in
            let work = counts.work(segmentsPerObject: segmentsPerObject)
            return CostModelFit.Point(name: "p\(index)", work: work, measuredNs: model.estimateNs(work), runs: 1)
        }
    }

    @Test("exact measurements give back the coefficients that produced them")
    func recoversCoefficients() throws {
        let result = try #require(CostModelFit().fit(Self.points(30, coefficients: Self.truth)))
        for (term, (fitted, truth)) in zip(LaunchCostModel.termNames, zip(result.coefficientsPs, Self.truth)) {
            #expect(abs(fitted - truth) <= truth / 100, "\(term): fitted \(fitted) ps, truth \(truth) ps")
        }
        #expect(result.rSquared > 0.9999)
        #expect(result.worstRelativeError < 0.001)
    }

    @Test("one closure slowed 3x by a busy machine barely moves the fit")
    func robustToOneOutlier() throws {
        var points = Self.points(30, coefficients: Self.truth)
        points[7].measuredNs *= 3
        let result = try #require(CostModelFit().fit(points))
        let model = LaunchCostModel.standard.with(coefficientsPs: result.coefficientsPs, source: "test", calibration: nil)
        for (index, point) in points.enumerated() where index != 7 {
            let truth = LaunchCostModel.standard.with(coefficientsPs: Self.truth, source: "", calibration: nil)
                .estimateNs(point.work)
            #expect(abs(model.estimateNs(point.work) - truth) <= truth / 20, "\(point.name)")
        }
    }

    @Test("a unit cost is never negative: a term that would be is pinned to 0 and the rest refitted")
    func nonNegative() throws {
        var points = Self.points(30, coefficients: Self.truth)
        // Measurements a little below what version checks would add: unconstrained, their
        // coefficient would go negative.
        for index in points.indices {
            points[index].measuredNs -= points[index].work.versionChecks * 3_000
        }
        let result = try #require(CostModelFit().fit(points))
        #expect(result.coefficientsPs.allSatisfy { $0 >= 0 }, "\(result.coefficientsPs)")
        #expect(result.coefficientsPs[7] == 0)
    }

    @Test("collinear terms (every object with four segments) still fit, the estimates exact")
    func collinear() throws {
        let points = Self.points(30, coefficients: Self.truth, segmentsPerObject: 4)
        let result = try #require(CostModelFit().fit(points))
        #expect(result.worstRelativeError < 0.001)
        // The segments' cost moved to the objects' term: 30 µs + 4 × 2 µs.
        #expect(abs(result.coefficientsPs[1] - 38_000_000) <= 380_000)
        #expect(result.coefficientsPs[2] == 0)
    }

    @Test("two points determine nothing; a few fit the essential terms only")
    func tooFew() throws {
        #expect(CostModelFit().fit(Self.points(2, coefficients: Self.truth)) == nil)
        let few = try #require(CostModelFit().fit(Self.points(5, coefficients: Self.truth)))
        #expect(few.coefficientsPs.filter { $0 != 0 }.count <= 5)
        #expect(few.coefficientsPs.allSatisfy { $0 >= 0 })
    }
}
