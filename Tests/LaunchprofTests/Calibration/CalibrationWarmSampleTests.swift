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

/// How calibrate spreads each program's launches over its interleaved rounds.
@Suite("Calibration: interleaved rounds")
struct CalibrationRoundTests {
    @Test("each program's launches add up to exactly its runs, spread over the rounds")
    func sharesAddUp() {
        for rounds in 1...12 {
            for runs in 1...45 {
                let shares = (0..<rounds).map { Calibrator.share(of: runs, inRound: $0, of: rounds) }
                #expect(shares.reduce(0, +) == runs, "runs \(runs), rounds \(rounds): \(shares)")
                // Even: no round has more than one launch more than another.
                #expect((shares.max() ?? 0) - (shares.min() ?? 0) <= 1, "runs \(runs), rounds \(rounds): \(shares)")
            }
        }
        // Three check launches over ten rounds: early, middle and late, not the first three rounds.
        let three = (0..<10).filter { Calibrator.share(of: 3, inRound: $0, of: 10) > 0 }
        #expect(three == [3, 6, 9])
        #expect((0..<10).map { Calibrator.share(of: 20, inRound: $0, of: 10) } == Array(repeating: 2, count: 10))
    }

    @Test("no more rounds than the most launches a program needs")
    func roundCount() {
        #expect(Calibrator.roundCount(10, runs: [20, 20, 3]) == 10)
        #expect(Calibrator.roundCount(10, runs: [4, 4]) == 4)
        #expect(Calibrator.roundCount(10, runs: []) == 1)
        #expect(Calibrator.roundCount(4, runs: [20]) == 4)
    }
}
