import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// `calibrate` refuses to store a fit its own programs disagree with (a busy spell slowed some):
/// the rule that decides it, on fits of measured points.
@Suite("Calibration: self-check of a fit")
struct CalibrationSelfCheckTests {
    private static func point(_ name: String, measured: Int, estimated: Int) -> CostModelFit.Point {
        CostModelFit.Point(name: name, work: LoaderWork(), measuredNs: measured, runs: 20, estimatedNs: estimated)
    }

    @Test("a fit within its limits is accepted")
    func agreeingFitPasses() {
        let points = (1...10).map { Self.point("p\($0)", measured: 1_000_000, estimated: 1_000_000 + $0 * 8_000) }
        #expect(CalibrationCheck.disagreement(points) == nil)
    }

    @Test("one program far off its fit is named, with its figures")
    func oneOutlierIsRefused() throws {
        var points = (1...10).map { Self.point("p\($0)", measured: 1_000_000, estimated: 1_020_000) }
        points.append(Self.point("node", measured: 1_520_000, estimated: 1_000_000))
        let why = try #require(CalibrationCheck.disagreement(points))
        #expect(why.contains("1 of 11 programs"), "\(why)")
        #expect(why.contains("node, measured 1520 µs, fitted 1000 µs"), "\(why)")
    }

    @Test("a fit off by 12% on the median program is refused though none is beyond 25%")
    func medianOffIsRefused() throws {
        let points = (1...9).map { Self.point("p\($0)", measured: 1_000_000, estimated: $0 % 2 == 0 ? 1_120_000 : 880_000) }
        let why = try #require(CalibrationCheck.disagreement(points))
        #expect(why.contains("the median program is 12% off"), "\(why)")
        #expect(!why.contains("programs are more than"), "\(why)")
    }
}
