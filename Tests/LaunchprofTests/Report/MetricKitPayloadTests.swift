import Foundation
import LaunchprofReport
import Testing

/// The MetricKit payloads from constructed runs: every metric path, read back by the strict
/// parser and validated against the schemas.
@Suite("MetricKit payloads")
struct MetricKitPayloadTests {
    typealias Parser = MetricKitPayloadParser

    func parse(_ report: LaunchReport, thresholdMs: UInt64 = 400) throws
        -> (metrics: Parser.MetricPayload, diagnostics: Parser.DiagnosticPayload)
    {
        let builder = MetricKitPayloadBuilder(
            context: ExportSamples.context, launchDiagnosticThresholdNs: thresholdMs * ExportSamples.ms)
        let payloads = try builder.encodedPayloads(report)
        try SchemaValidator.expectValid(payloads.metrics, against: .metricKitMetrics, "metrics.json")
        try SchemaValidator.expectValid(payloads.diagnostics, against: .metricKitDiagnostics, "diagnostics.json")
        return (try Parser.metrics(Data(payloads.metrics)), try Parser.diagnostics(Data(payloads.diagnostics)))
    }

    /// Every value lies in the bucket that counts it: rebuilds the counts from the truth.
    func expectBuckets(_ histogram: Parser.Histogram?, hold valuesNs: [UInt64], widthMs: Int, _ what: String) {
        guard let histogram else {
            Issue.record("\(what): missing")
            return
        }
        #expect(histogram.total == valuesNs.count, "\(what): counts sum to the values")
        for bucket in histogram.buckets {
            #expect(bucket.endMs - bucket.startMs == widthMs, "\(what): width")
            let inside = valuesNs.filter { $0 >= UInt64(bucket.startMs) * 1_000_000 && $0 < UInt64(bucket.endMs) * 1_000_000 }
            #expect(inside.count == bucket.count, "\(what): bucket \(bucket.startMs)–\(bucket.endMs) ms")
        }
    }

    @Test("every launch metric and the hang time, each run counted once")
    func everyMetric() throws {
        let runs = [
            ExportSamples.run(index: 0, firstFrameMs: 14, resumeMs: 3),
            ExportSamples.run(index: 1, firstFrameMs: 19, resumeMs: 12, tasks: false, hangsMs: [260, 1_240]),
            ExportSamples.run(index: 2, firstFrameMs: 31, resumeMs: 4),
            ExportSamples.run(index: 3, firstFrameMs: 5_000, optimizedMs: 22, tasks: false),
            ExportSamples.run(index: 4, firstFrameMs: 7_000, optimizedMs: 9, hangsMs: [300]),
        ]
        let (metrics, _) = try parse(ExportSamples.report(runs))
        #expect(metrics.appVersion == "unknown")
        #expect(metrics.timeStampBegin == "2023-11-14 22:13:20")
        #expect(metrics.timeStampEnd == "2023-11-14 22:14:02")
        #expect(metrics.metaData["appBuildVersion"] as? String == "0123456789abcdef")
        #expect(metrics.metaData["bundleIdentifier"] as? String == "/opt/demo/app")
        #expect(metrics.metaData["osVersion"] as? String == "Debian GNU/Linux 12 (bookworm), Linux 6.1.0-test")
        #expect(metrics.metaData["deviceType"] as? String == "Test CPU @ 2.00GHz")
        #expect(metrics.metaData["platformArchitecture"] as? String == "x86_64")
        #expect(metrics.metaData["regionFormat"] as? String == "US")
        #expect(metrics.metaData["pid"] == nil, "a metric payload aggregates many processes")

        // Prewarmed runs go under the optimized key only: the two sum to the runs.
        let ordinary = runs.filter { $0.metrics.optimizedTimeToFirstFrameNs == nil }
        expectBuckets(
            metrics.launch["histogrammedTimeToFirstDrawKey"], hold: ordinary.compactMap(\.metrics.timeToFirstFrameNs),
            widthMs: 10, "time to first draw")
        expectBuckets(
            metrics.launch["histogrammedOptimizedTimeToFirstDrawKey"], hold: [22 * ExportSamples.ms, 9 * ExportSamples.ms],
            widthMs: 10, "optimized")
        #expect(
            (metrics.launch["histogrammedTimeToFirstDrawKey"]?.total ?? 0)
                + (metrics.launch["histogrammedOptimizedTimeToFirstDrawKey"]?.total ?? 0) == runs.count)
        expectBuckets(
            metrics.launch["histogrammedResumeTime"], hold: [3, 12, 4].map { $0 * ExportSamples.ms }, widthMs: 10, "resume")
        let withTasks = runs.filter { $0.phases.contains { $0.name == "extendedLaunch" } }
        #expect(withTasks.count == 3)
        expectBuckets(
            metrics.launch["histogrammedExtendedLaunch"], hold: withTasks.compactMap(\.metrics.extendedLaunchNs),
            widthMs: 10, "extended launch")
        expectBuckets(
            metrics.responsiveness["histogrammedAppHangTime"], hold: [260, 1_240, 300].map { $0 * ExportSamples.ms },
            widthMs: 100, "hang time")
        #expect(metrics.responsiveness["histogrammedAppHangTime"]?.buckets.map(\.startMs) == [200, 300, 1_200])
    }

    @Test("a metric with no data is left out, and so is an empty group")
    func absentMetrics() throws {
        var run = ExportSamples.run(index: 0, firstFrameMs: 12, tasks: false)
        run.metrics.timeToFirstFrameNs = nil
        let (metrics, diagnostics) = try parse(ExportSamples.report([run]))
        #expect(metrics.launch.isEmpty)
        #expect(metrics.responsiveness.isEmpty)
        let builder = MetricKitPayloadBuilder(context: ExportSamples.context)
        let text = String(decoding: try builder.encodedPayloads(ExportSamples.report([run])).metrics, as: UTF8.self)
        #expect(!text.contains("applicationLaunchMetrics"))
        #expect(!text.contains("applicationResponsivenessMetrics"))
        #expect(diagnostics.launches.isEmpty && diagnostics.hangs.isEmpty)

        let onlyFirstFrame = try parse(ExportSamples.report([ExportSamples.run(index: 0, firstFrameMs: 12, tasks: false)]))
        #expect(Set(onlyFirstFrame.metrics.launch.keys) == ["histogrammedTimeToFirstDrawKey"])
    }

    @Test("launch diagnostics at or over the threshold, hang diagnostics with the sampled tree")
    func diagnostics() throws {
        let runs = [
            ExportSamples.run(index: 0, firstFrameMs: 14),
            ExportSamples.run(index: 1, firstFrameMs: 40, hangsMs: [260], sampled: true),
            ExportSamples.run(index: 2, firstFrameMs: 25),
            ExportSamples.run(index: 3, firstFrameMs: 9_000, optimizedMs: 30),
        ]
        let (_, diagnostics) = try parse(ExportSamples.report(runs), thresholdMs: 25)
        // Runs 1 (40 ms) and 2 (25 ms, on the threshold); run 3 counts from its resume (30 ms).
        #expect(diagnostics.launches.map { $0.metaData["pid"] as? Int } == [1001, 1002, 1003])
        #expect(diagnostics.launches.map { $0.metaData["launchDuration"] as? String } == ["40 ms", "25 ms", "30 ms"])
        #expect(diagnostics.launches.map(\.hasCallStackTree) == [true, false, false])
        #expect(diagnostics.hangs.count == 1)
        #expect(diagnostics.hangs.first?.metaData["hangDuration"] as? String == "260 ms")
        #expect(diagnostics.hangs.first?.hangType == "Main Runloop Hang")
        #expect(diagnostics.hangs.first?.hasCallStackTree == true)
        #expect(diagnostics.launches.first?.metaData["appVersion"] as? String == "unknown")
    }

    @Test("the strict parser refuses a misspelled or unknown key")
    func parserIsStrict() throws {
        let builder = MetricKitPayloadBuilder(context: ExportSamples.context)
        let good = String(
            decoding: try builder.encodedPayloads(ExportSamples.report([ExportSamples.run(index: 0, firstFrameMs: 12)])).metrics,
            as: UTF8.self)
        _ = try Parser.metrics(Data(good.utf8))
        for (from, to) in [
            ("histogrammedTimeToFirstDrawKey", "histogrammedTimeToFirstDraw"), ("bucketCount", "bucketcount"),
            ("\"metaData\"", "\"metadata\""), ("histogramNumBuckets", "histogramNumBucket"),
        ] {
            let bad = good.replacingOccurrences(of: from, with: to)
            #expect(bad != good)
            #expect(throws: Parser.Failure.self, "\(to)") { try Parser.metrics(Data(bad.utf8)) }
            #expect(try SchemaValidator.problems(Array(bad.utf8), against: .metricKitMetrics) != nil, "schema: \(to)")
        }
    }

    @Test("histograms: fixed-width buckets, only non-empty ones, indexed in order")
    func histogram() throws {
        let values: [UInt64] = [0, 9_999_999, 10_000_000, 10_000_001, 55_000_000]
        let histogram = try #require(MetricKitHistogram(valuesNs: values, bucketWidthMs: 10))
        #expect(histogram.histogramNumBuckets == 3)
        #expect(
            histogram.orderedBuckets == [
                .init(bucketStart: "0 ms", bucketEnd: "10 ms", bucketCount: 2),
                .init(bucketStart: "10 ms", bucketEnd: "20 ms", bucketCount: 2),
                .init(bucketStart: "50 ms", bucketEnd: "60 ms", bucketCount: 1),
            ])
        #expect(histogram.totalCount == values.count)
        #expect(MetricKitHistogram(valuesNs: [], bucketWidthMs: 10) == nil)
    }

    @Test("timestamps in MetricKit's format, UTC")
    func timestamps() {
        #expect(MetricKitPayloadBuilder.timestamp(0) == "1970-01-01 00:00:00")
        #expect(MetricKitPayloadBuilder.timestamp(951_782_400) == "2000-02-29 00:00:00")
        #expect(MetricKitPayloadBuilder.timestamp(1_700_000_000) == "2023-11-14 22:13:20")
        #expect(MetricKitPayloadBuilder.timestamp(4_102_444_799) == "2099-12-31 23:59:59")
        #expect(MetricKitPayloadBuilder.timestamp(-1) == "1969-12-31 23:59:59")
    }
}
