import Testing

@testable import LaunchprofCore

/// Which launches a calibration point's median is taken over: the cost model is a warm one, so
/// launches that read pages from disk are left out — unless most did, when leaving them out
/// would leave too few (the counts themselves: `PageFaultTests`).
@Suite("Calibration: warm launches only")
struct CalibrationWarmSampleTests {
    typealias Sample = Calibrator.Sample

    @Test("launches that read from disk are left out of the median while half or more ran warm")
    func leavesOutReadsFromDisk() {
        let samples = [
            Sample(loaderNs: 1_000, readFromDisk: false), Sample(loaderNs: 9_000, readFromDisk: true),
            Sample(loaderNs: 1_100, readFromDisk: false), Sample(loaderNs: 1_050, readFromDisk: false),
        ]
        #expect(Calibrator.warm(samples) == [1_000, 1_100, 1_050])
        #expect(Calibrator.warm(samples.filter { !$0.readFromDisk }) == [1_000, 1_100, 1_050])
        // Two of four warm: still half.
        let half = [samples[0], samples[1], samples[2], Sample(loaderNs: 8_000, readFromDisk: true)]
        #expect(Calibrator.warm(half) == [1_000, 1_100])
    }

    @Test("when most launches read from disk, all of them count")
    func keepsAllWhenMostReadFromDisk() {
        let samples = [
            Sample(loaderNs: 9_000, readFromDisk: true), Sample(loaderNs: 8_500, readFromDisk: true),
            Sample(loaderNs: 1_000, readFromDisk: false),
        ]
        #expect(Calibrator.warm(samples) == [9_000, 8_500, 1_000])
        #expect(Calibrator.warm([]) == [])
    }
}
