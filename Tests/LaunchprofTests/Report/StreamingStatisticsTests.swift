import LaunchprofReport
import Testing

/// Streaming statistics against a plain computation over the sorted values.
@Suite("StreamingStatistics")
struct StreamingStatisticsTests {
    /// Nearest-rank percentile of sorted values (what an HDR histogram approximates).
    static func nearestRank(_ sorted: [UInt64], _ percentile: Double) -> UInt64 {
        let rank = max(1, Int((percentile / 100 * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }

    static func exactSummary(_ values: [UInt64]) -> (mean: Double, stddev: Double) {
        let mean = values.reduce(0.0) { $0 + Double($1) } / Double(values.count)
        guard values.count > 1 else { return (mean, 0) }
        let squares = values.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) }
        return (mean, (squares / Double(values.count - 1)).squareRoot())
    }

    static func datasets() -> [[UInt64]] {
        var generator = SplitMix64(seed: 7)
        let uniform = (0..<1_000).map { _ in 200_000 + generator.next() % 3_000_000 }
        // Launch-like: a log-normal-ish body with a long tail.
        let skewed = (0..<733).map { _ -> UInt64 in
            let base = 1_000_000 + generator.next() % 200_000
            return generator.next() % 20 == 0 ? base * (2 + generator.next() % 8) : base
        }
        let tiny = [UInt64(5)]
        let small: [UInt64] = [1_200, 0, 999_999, 45_000_000_000]
        let constant = [UInt64](repeating: 123_456_789, count: 50)
        // More values than are kept exactly: percentiles come from the histogram.
        let many = (0..<10_000).map { _ in 300_000 + generator.next() % 900_000 }
        return [uniform, skewed, tiny, small, constant, many]
    }

    @Test("up to 2,048 values, percentiles are exactly the sorted values' nearest ranks")
    func exactPercentiles() throws {
        for values in Self.datasets() where values.count <= 2_048 {
            var statistics = StreamingStatistics()
            for value in values { statistics.record(value) }
            let summary = try #require(statistics.summary)
            let sorted = values.sorted()
            #expect(summary.median == Self.nearestRank(sorted, 50))
            #expect(summary.p90 == Self.nearestRank(sorted, 90))
            #expect(summary.p99 == Self.nearestRank(sorted, 99))
        }
    }

    @Test("min, max exact; mean and stddev exact to the rounding; percentiles within 0.1%")
    func againstSortedArray() throws {
        for values in Self.datasets() {
            var statistics = StreamingStatistics()
            for value in values { statistics.record(value) }
            let summary = try #require(statistics.summary)
            let sorted = values.sorted()
            let exact = Self.exactSummary(values)
            #expect(summary.count == values.count)
            #expect(summary.min == sorted.first)
            #expect(summary.max == sorted.last)
            #expect(abs(Double(summary.mean) - exact.mean) <= 0.5 + exact.mean * 1e-12)
            #expect(abs(Double(summary.stddev) - exact.stddev) <= 0.5 + exact.stddev * 1e-9)
            for (p, value) in [(50.0, summary.median), (90.0, summary.p90), (99.0, summary.p99)] {
                let truth = Self.nearestRank(sorted, p)
                let tolerance = Double(truth) / 1_000 + 1
                #expect(abs(Double(value) - Double(truth)) <= tolerance, "p\(p): \(value) vs \(truth)")
            }
        }
    }

    @Test("outliers: Tukey's fences count the same runs as a sorted computation")
    func outliers() throws {
        var generator = SplitMix64(seed: 99)
        // A tight body and a few far values on both sides.
        var values = (0..<200).map { _ in 10_000_000 + generator.next() % 1_000_000 }
        values += [40_000_000, 55_000_000, 90_000_000, 100_000]
        var statistics = StreamingStatistics()
        for value in values { statistics.record(value) }
        let summary = try #require(statistics.summary)
        let sorted = values.sorted()
        let q1 = Double(Self.nearestRank(sorted, 25))
        let q3 = Double(Self.nearestRank(sorted, 75))
        let low = q1 - 1.5 * (q3 - q1)
        let high = q3 + 1.5 * (q3 - q1)
        let expected = values.filter { Double($0) < low || Double($0) > high }.count
        #expect(expected == 4)
        #expect(summary.outliers == expected)
    }

    @Test("absurd values (an app can send any timestamp) never trap")
    func absurdValues() throws {
        for values: [UInt64] in [
            [UInt64](repeating: UInt64.max, count: 6),
            [0, 0, 0, 0, UInt64.max, UInt64.max / 2],
            [1, 2, 3, UInt64.max - 1, UInt64.max, 5, 6, 7],
        ] {
            var statistics = StreamingStatistics()
            for value in values { statistics.record(value) }
            let summary = try #require(statistics.summary)
            #expect(summary.min == values.min())
            #expect(summary.max == values.max())
            #expect(summary.median >= summary.min && summary.median <= summary.max)
        }
    }

    @Test("no values, no summary")
    func empty() {
        #expect(StreamingStatistics().summary == nil)
    }

    @Test("the summary builder keeps one entry per distinct phase and counts failures")
    func summaryBuilder() throws {
        let phases = [
            LaunchPhase(name: "exec", startNs: 0, durationNs: 100),
            LaunchPhase(name: "loader.init", startNs: 100, durationNs: 50, object: "/a.so"),
            LaunchPhase(name: "loader.init", startNs: 150, durationNs: 70, object: "/b.so"),
            LaunchPhase(name: "poll", startNs: 300, durationNs: 10),
            LaunchPhase(name: "poll", startNs: 400, durationNs: 30),
        ]
        var builder = LaunchSummaryBuilder()
        for index in 0..<3 {
            let scale = UInt64(index + 1)
            let scaled = phases.map {
                LaunchPhase(name: $0.name, startNs: $0.startNs * scale, durationNs: $0.durationNs * scale, object: $0.object)
            }
            builder.add(
                LaunchRun(
                    index: index, pid: 100 + Int32(index),
                    exitStatus: RunExit(code: index == 2 ? 1 : 0), phases: scaled,
                    metrics: LaunchMetrics(timeToMainNs: 1_000 * scale, exitNs: 5_000 * scale)))
        }
        let summary = builder.summary
        #expect(summary.runs == 3)
        #expect(summary.failedRuns == 1)
        #expect(summary.timeToMainNs?.median == 2_000)
        #expect(summary.timeToMainNs?.count == 3)
        #expect(summary.timeToFirstFrameNs == nil)
        #expect(summary.phases.map(\.name) == ["exec", "loader.init", "loader.init", "poll", "poll"])
        #expect(summary.phases.map(\.object) == [nil, "/a.so", "/b.so", nil, nil])
        #expect(summary.phases.map(\.occurrence) == [nil, nil, nil, nil, 1])
        #expect(summary.phases[2].durationNs.max == 70 * 3)
        #expect(summary.phases[4].startNs.min == 400)
    }
}

@Suite("LaunchSummaryBuilder ordering")
struct LaunchSummaryOrderingTests {
    @Test("a phase first seen in a later run is placed by its median start")
    func lateComerInTimeOrder() {
        var builder = LaunchSummaryBuilder()
        let early = LaunchPhase(name: "a", startNs: 0, durationNs: 10)
        let late = LaunchPhase(name: "c", startNs: 500, durationNs: 10)
        let middle = LaunchPhase(name: "b", startNs: 200, durationNs: 10)
        builder.add(LaunchRun(index: 0, pid: 1, exitStatus: RunExit(code: 0), phases: [early, late], metrics: LaunchMetrics()))
        builder.add(LaunchRun(index: 1, pid: 2, exitStatus: RunExit(code: 0), phases: [early, middle, late], metrics: LaunchMetrics()))
        #expect(builder.summary.phases.map(\.name) == ["a", "b", "c"])
        #expect(builder.summary.phases.map(\.startNs.count) == [2, 1, 2])
    }

    /// A prewarm saving is negative where prewarming lost: the signed statistics keep it, with
    /// the same nearest-rank rules as the unsigned ones, exactly while the values are few and
    /// from the histograms (3 significant digits) beyond.
    @Test("signed values: negative savings kept, nearest ranks over both signs")
    func signedValues() throws {
        var generator = SplitMix64(seed: 11)
        for count in [1, 4, 7, 1_000, 5_000] {
            let values = (0..<count).map { _ in Int64(generator.next() % 20_000_000) - 12_000_000 }
            var statistics = SignedStreamingStatistics()
            for value in values { statistics.record(value) }
            let summary = try #require(statistics.summary)
            let sorted = values.sorted()
            func rank(_ percentile: Double) -> Int64 {
                sorted[min(max(1, Int((percentile / 100 * Double(count)).rounded(.up))), count) - 1]
            }
            #expect(summary.count == count && summary.min == sorted.first && summary.max == sorted.last)
            let mean = values.reduce(0.0) { $0 + Double($1) } / Double(count)
            #expect(abs(Double(summary.mean) - mean) <= 0.5 + abs(mean) * 1e-12)
            for (got, percentile) in [(summary.median, 50.0), (summary.p90, 90), (summary.p99, 99)] {
                let exact = rank(percentile)
                // Exact up to 2,048 values; beyond, within the histogram's 0.1% of the magnitude.
                let tolerance = count <= 2_048 ? 0 : max(Double(exact.magnitude) * 0.001, 1)
                #expect(abs(Double(got) - Double(exact)) <= tolerance, "\(count) values, p\(percentile): \(got) vs \(exact)")
            }
        }
        var losses = SignedStreamingStatistics()
        for value: Int64 in [-4_900_000, -1_000_000, 2_000_000] { losses.record(value) }
        #expect(losses.summary?.median == -1_000_000 && losses.summary?.min == -4_900_000)
    }
}
