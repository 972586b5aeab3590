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
                symbolTableFaults: tablePages / next(1...16), lookupNameBytes: lookups * next(8...80),
                largeTableLookups: lookups / next(1...8))
        }
    }

    static let truth = [
        300_000_000, 30_000_000, 2_000_000, 6_000, 150_000, 10_000, 2_000_000, 1_000_000, 200_000, 2_500_000, 1_200,
        110_000,
    ]

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
    /// Counts of `calibrate`'s own probes on the test host (mapped objects, segments, relative,
    /// lookups, scope steps, pages written, version checks, table pages, table faults): tables
    /// read 14, 6 and 2.5 pages a fault, and system programs with a few pages each.
    static let probeCounts: [[Int]] = [
        [2, 8, 1270, 87, 231, 13, 6, 33, 6], [17, 68, 1330, 147, 2451, 43, 6, 48, 21],
        [49, 196, 1458, 275, 13203, 107, 6, 80, 53], [2, 8, 61270, 88, 233, 131, 6, 33, 6],
        [2, 8, 3270, 88, 233, 2013, 6, 33, 6], [3, 12, 1273, 1116, 4359, 38, 6, 52, 7],
        [43, 172, 1433, 1276, 55559, 106, 6, 92, 47], [2, 8, 1001270, 88, 233, 1966, 6, 33, 6],
        [3, 12, 1273, 2092, 8263, 18, 6, 489, 35], [3, 12, 1273, 392, 1463, 15, 6, 848, 134],
        [3, 12, 1273, 156, 519, 15, 6, 296, 118], [2, 8, 1669, 87, 231, 13, 406, 38, 6],
        [1, 4, 1320, 87, 149, 11, 11, 32, 5], [3, 12, 1666, 333, 889, 15, 32, 41, 7],
        [31, 124, 40830, 8987, 116136, 252, 246, 249, 40], [12, 48, 24058, 4430, 19385, 151, 116, 143, 20],
        [7, 28, 15647, 572, 2909, 170, 38, 57, 11], [26, 104, 73754, 5845, 94016, 558, 287, 322, 42],
        [54, 216, 68923, 13661, 386649, 444, 472, 548, 78], [71, 282, 75051, 18726, 369229, 467, 478, 677, 101],
    ]

    static func work(_ counts: [Int]) -> LoaderWork {
        LoaderWork(
            mappedObjects: counts[0], segments: counts[1], relative: counts[2], lookups: counts[3],
            scopeSteps: counts[4], pagesTouched: counts[5], versionChecks: counts[6], symbolTablePages: counts[7],
            symbolTableFaults: counts[8])
    }

    /// node --version: 433 pages of its tables read in 106 faults, 3 pages a fault.
    static let node = work([6, 24, 3284, 2311, 8501, 35, 74, 433, 106])

    /// A read fault costs ~2.5 µs, a page read after it ~0.2 µs. Probes whose faults were
    /// counted right give a fault its price and node its estimate; when a fault mapped twice
    /// the window counted (files freshly written by the linker sit in the page cache in large
    /// folios), the table probes measured fewer faults than counted, the fit gave their cost to
    /// pages and node, which reads a page or two per fault, came out short.
    @Test("a read fault is priced apart from a table page; tables faulting half as often as counted price it low")
    func faultsApartFromPages() throws {
        let truth = [305_000_000, 40_000_000, 0, 3_200, 120_000, 9_000, 2_200_000, 420_000, 200_000, 2_500_000, 0, 0]
        let model = LaunchCostModel.standard.with(coefficientsPs: truth, source: "test", calibration: nil)
        var noise = Counts()
        // The three probes reading a table of hundreds of pages (the synthetic ones).
        let tables: Set = [8, 9, 10]
        func points(tableFaultsTaken: (Int) -> Int) -> [CostModelFit.Point] {
            Self.probeCounts.enumerated().map { index, counts in
                var taken = Self.work(counts)
                if tables.contains(index) { taken.symbolTableFaults = tableFaultsTaken(taken.symbolTableFaults) }
                // ±3% of a busy host, deterministic.
                let measured = model.estimateNs(taken) * (970 + noise.next(0...60)) / 1_000
                return CostModelFit.Point(name: "p\(index)", work: Self.work(counts), measuredNs: measured, runs: 20)
            }
        }
        let nodeTruth = model.estimateNs(Self.node)
        let right = try #require(CostModelFit().fit(points { $0 }))
        #expect(abs(right.coefficientsPs[9] - truth[9]) <= truth[9] / 4, "fault \(right.coefficientsPs[9]) ps")
        let fitted = model.with(coefficientsPs: right.coefficientsPs, source: "fit", calibration: nil)
        #expect(abs(fitted.estimateNs(Self.node) - nodeTruth) <= nodeTruth / 10, "node \(fitted.estimateNs(Self.node)) vs \(nodeTruth)")
        // Large folios: the synthetic tables took half the faults counted.
        let halved = try #require(CostModelFit().fit(points { $0 / 2 }))
        let low = model.with(coefficientsPs: halved.coefficientsPs, source: "fit", calibration: nil)
        #expect(halved.coefficientsPs[9] < right.coefficientsPs[9], "\(halved.coefficientsPs) vs \(right.coefficientsPs)")
        #expect(low.estimateNs(Self.node) < fitted.estimateNs(Self.node), "node \(low.estimateNs(Self.node))")
    }
}
