import Foundation
import LaunchprofReport
import LaunchprofRenderers
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
        #expect(metrics.metaData["pid"] as? Int == -1, "a metric payload aggregates many processes")
        #expect(metrics.metaData["lowPowerModeEnabled"] as? Bool == false)
        #expect(metrics.metaData["isTestFlightApp"] as? Bool == false)

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
        #expect(diagnostics.launches.map(\.frameCount) == [4, 0, 0], "an empty tree when not sampled")
        #expect(diagnostics.hangs.count == 1)
        #expect(diagnostics.hangs.first?.metaData["hangDuration"] as? String == "260 ms")
        #expect(diagnostics.hangs.first?.hangType == "Main Runloop Hang")
        #expect(diagnostics.hangs.first?.frameCount == 4)
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

    /// The whole-ms text MetricKit writes for `ns`, rounded to the nearest, computed here from
    /// the truth independently of the builder.
    static func wholeMs(_ ns: UInt64) -> String { "\(Int((Double(ns) / 1e6).rounded())) ms" }

    @Test("every payload decodes with Meter's and Sentry's types: metrics, launch and hang diagnostics, sampled or not")
    func consumersDecode() throws {
        typealias Mirror = MetricKitConsumerMirrors
        let ms = ExportSamples.ms
        var slow = ExportSamples.run(index: 1, firstFrameMs: 40, hangsMs: [260, 1_240], sampled: true)
        slow.metrics.timeToFirstFrameNs = 40 * ms + 499_999  // rounds down
        var unsampled = ExportSamples.run(index: 2, firstFrameMs: 31, hangsMs: [312])
        unsampled.metrics.timeToFirstFrameNs = 31 * ms + 500_000  // rounds up
        unsampled.flags?[0].durationNs = 312 * ms + 500_000
        let runs = [ExportSamples.run(index: 0, firstFrameMs: 14), slow, unsampled,
                    ExportSamples.run(index: 3, firstFrameMs: 9_000, optimizedMs: 30, sampled: true)]
        var context = ExportSamples.context
        context.regionFormat = nil
        let builder = MetricKitPayloadBuilder(context: context, launchDiagnosticThresholdNs: 25 * ms)
        let payloads = try builder.encodedPayloads(ExportSamples.report(runs))
        try SchemaValidator.expectValid(payloads.metrics, against: .metricKitMetrics, "metrics.json")
        try SchemaValidator.expectValid(payloads.diagnostics, against: .metricKitDiagnostics, "diagnostics.json")

        let metrics = try Mirror.decoder().decode(Mirror.MetricPayload.self, from: Data(payloads.metrics))
        #expect(metrics.metaData.regionFormat == "ZZ", "C/POSIX: CLDR's unknown region")
        #expect(metrics.metaData.pid == -1 && !metrics.metaData.lowPowerModeEnabled && !metrics.metaData.isTestFlightApp)
        for bucket in metrics.applicationLaunchMetrics?.histogrammedTimeToFirstDrawKey?.histogramValue.values.map({ $0 }) ?? [] {
            #expect(bucket.bucketStart.wholeMatch(of: /[0-9]+ ms/) != nil && bucket.bucketEnd.wholeMatch(of: /[0-9]+ ms/) != nil)
        }

        let meter = try Mirror.decoder().decode(Mirror.MeterDiagnosticPayload.self, from: Data(payloads.diagnostics))
        let launches = try #require(meter.appLaunchDiagnostics)
        let hangs = try #require(meter.hangDiagnostics)
        // Runs 1, 2 and 3 (from its resume) are at or over 25 ms; three hangs in runs 1 and 2.
        #expect(launches.map(\.diagnosticMetaData.launchDuration) == [40, 32, 30].map { Self.wholeMs($0 * ms) })
        #expect(hangs.map(\.diagnosticMetaData.hangDuration) == ["260 ms", "1240 ms", "313 ms"])
        #expect(launches.map(\.diagnosticMetaData.pid) == [1001, 1002, 1003], "a diagnostic names its process")
        #expect((launches + hangs).allSatisfy { $0.diagnosticMetaData.regionFormat == "ZZ" && $0.version == "1.0.0" })
        #expect((launches + hangs).allSatisfy { $0.diagnosticMetaData.lowPowerModeEnabled == false })
        #expect(launches.map { $0.callStackTree.callStacks.isEmpty } == [false, true, false])
        #expect(hangs.map { $0.callStackTree.callStacks.isEmpty } == [false, false, true])

        // Sentry decodes each diagnostic's tree on its own: re-encode each one as it is in the file.
        let top = try #require(try JSONSerialization.jsonObject(with: Data(payloads.diagnostics)) as? [String: Any])
        var trees = 0
        for key in ["appLaunchDiagnostics", "hangDiagnostics"] {
            for diagnostic in top[key] as? [[String: Any]] ?? [] {
                let tree = try #require(diagnostic["callStackTree"])
                let data = try JSONSerialization.data(withJSONObject: tree)
                let sentry = try JSONDecoder().decode(Mirror.SentryCallStackTree.self, from: data)
                func check(_ frame: Mirror.SentryFrame, truth: CallStackTree.Frame) {
                    #expect(frame.binaryUUID.uuidString == CallStackTree.Frame.uuid(buildID: truth.launchprofBuildID))
                    #expect(frame.offsetIntoBinaryTextSegment == Int(truth.offsetIntoBinaryTextSegment))
                    #expect(frame.address == truth.address)
                    for (child, truthChild) in zip(frame.subFrames ?? [], truth.subFrames ?? []) { check(child, truth: truthChild) }
                }
                for (root, truth) in zip(
                    sentry.callStacks.flatMap(\.callStackRootFrames),
                    ExportSamples.tree.callStacks.flatMap(\.callStackRootFrames))
                {
                    check(root, truth: truth)
                }
                trees += 1
            }
        }
        #expect(trees == 6)
        // The app's 20-byte build-id: its first 16 bytes, uppercase, and the whole under launchprof's key.
        let text = String(decoding: payloads.diagnostics, as: UTF8.self)
        #expect(text.contains("\"binaryUUID\" : \"01234567-89AB-CDEF-0123-456789ABCDEF\""))
        #expect(text.contains("\"launchprofBuildID\" : \"0123456789abcdef0123456789abcdef01234567\""))
        // And launchprof's own strict reader agrees.
        _ = try Parser.metrics(Data(payloads.metrics))
        let parsed = try Parser.diagnostics(Data(payloads.diagnostics))
        #expect(parsed.hangs.map(\.durationMs) == [260, 1_240, 313])
    }

    @Test("a build-id in NSUUID form: the first 16 bytes, uppercase, zero-padded when shorter")
    func binaryUUID() throws {
        typealias Frame = CallStackTree.Frame
        #expect(Frame.uuid(buildID: "0123456789abcdef0123456789abcdef01234567") == "01234567-89AB-CDEF-0123-456789ABCDEF")
        #expect(Frame.uuid(buildID: "0123456789abcdef0123456789abcdef") == "01234567-89AB-CDEF-0123-456789ABCDEF")
        #expect(Frame.uuid(buildID: "feed") == "FEED0000-0000-0000-0000-000000000000")
        #expect(Frame.uuid(buildID: "") == "00000000-0000-0000-0000-000000000000")
        for id in ["", "feed", "0123456789abcdef0123456789abcdef01234567", "8a1f"] {
            #expect(UUID(uuidString: Frame.uuid(buildID: id)) != nil, "\(id)")
        }
        // A report written before launchprofBuildID (binaryUUID held the build-id) still reads.
        let old = #"{"address":1,"binaryName":"app","binaryUUID":"ab12cd","offsetIntoBinaryTextSegment":1,"sampleCount":2}"#
        let frame = try JSONDecoder().decode(Frame.self, from: Data(old.utf8))
        #expect(frame.launchprofBuildID == "ab12cd" && frame.binaryUUID == "AB12CD00-0000-0000-0000-000000000000")
    }

    /// Payloads in Apple's own shapes: the reference's metric example with " +0000" timestamps
    /// and groups launchprof does not write, and diagnostics with "20 sec" hangs and NSUUIDs.
    static let appleMetrics = #"""
        {"appVersion":"1.0","timeStampBegin":"2022-11-14 00:00:00 +0000","timeStampEnd":"2022-11-14 23:59:00 +0000",
         "metaData":{"appBuildVersion":"1","osVersion":"iPhone OS 16.0.2 (20A380)","regionFormat":"IN",
           "platformArchitecture":"arm64e","bundleIdentifier":"com.example.app","deviceType":"iPhone11,8",
           "lowPowerModeEnabled":false,"pid":-1,"isTestFlightApp":false},
         "cpuMetrics":{"cumulativeCPUTime":"100 sec"},
         "applicationLaunchMetrics":{
           "histogrammedTimeToFirstDrawKey":{"histogramNumBuckets":2,"histogramValue":{
              "0":{"bucketCount":50,"bucketStart":"1000 ms","bucketEnd":"1010 ms"},
              "1":{"bucketCount":60,"bucketStart":"2000 ms","bucketEnd":"2010 ms"}}},
           "histogrammedOptimizedTimeToFirstDrawKey":{"histogramNumBuckets":1,"histogramValue":{
              "0":{"bucketCount":50,"bucketStart":"1000 ms","bucketEnd":"1010 ms"}}},
           "histogrammedResumeTime":{"histogramNumBuckets":1,"histogramValue":{
              "0":{"bucketCount":60,"bucketStart":"200 ms","bucketEnd":"210 ms"}}},
           "histogrammedExtendedLaunch":{"histogramNumBuckets":1,"histogramValue":{
              "0":{"bucketCount":50,"bucketStart":"1000 ms","bucketEnd":"1010 ms"}}}},
         "applicationResponsivenessMetrics":{"histogrammedAppHangTime":{"histogramNumBuckets":1,
           "histogramValue":{"0":{"bucketCount":50,"bucketStart":"0 ms","bucketEnd":"100 ms"}}}}}
        """#
    static let appleDiagnostics = #"""
        {"timeStampBegin":"2022-11-14 00:00:00 +0000","timeStampEnd":"2022-11-14 23:59:00 +0000",
         "hangDiagnostics":[{"version":"1.0.0","hangType":"Main Runloop Hang",
           "diagnosticMetaData":{"appBuildVersion":"1","appVersion":"1.0","osVersion":"iPhone OS 16.0.2 (20A380)",
             "regionFormat":"IN","platformArchitecture":"arm64e","bundleIdentifier":"com.example.app",
             "deviceType":"iPhone11,8","hangDuration":"20 sec","pid":412,"lowPowerModeEnabled":false,"isTestFlightApp":false},
           "callStackTree":{"callStackPerThread":true,"callStacks":[{"threadAttributed":true,"callStackRootFrames":[
             {"binaryUUID":"2B063BFD-1034-4DF1-A195-30DBC462B747","offsetIntoBinaryTextSegment":123,"sampleCount":20,
              "binaryName":"testBinaryName","address":74565,
              "subFrames":[{"binaryUUID":"2B063BFD-1034-4DF1-A195-30DBC462B747","offsetIntoBinaryTextSegment":456,
                "sampleCount":20,"binaryName":"testBinaryName","address":74999}]}]}]}}],
         "appLaunchDiagnostics":[{"version":"1.0.0",
           "diagnosticMetaData":{"appBuildVersion":"1","appVersion":"1.0","osVersion":"iPhone OS 16.0.2 (20A380)",
             "regionFormat":"IN","platformArchitecture":"arm64e","bundleIdentifier":"com.example.app",
             "deviceType":"iPhone11,8","launchDuration":"20000 ms","pid":413,"lowPowerModeEnabled":false,"isTestFlightApp":false},
           "callStackTree":{"callStackPerThread":true,"callStacks":[{"threadAttributed":true,"callStackRootFrames":[
             {"binaryUUID":"2B063BFD-1034-4DF1-A195-30DBC462B747","offsetIntoBinaryTextSegment":123,"sampleCount":1,
              "binaryName":"testBinaryName","address":74565}]}]}}]}
        """#

    @Test("Apple's real shapes parse with launchprof's reader and with the consumers' types")
    func appleShapedPayloads() throws {
        let metrics = try Parser.metrics(Data(Self.appleMetrics.utf8))
        #expect(metrics.timeStampBegin == "2022-11-14 00:00:00 +0000")
        #expect(metrics.launch["histogrammedTimeToFirstDrawKey"]?.buckets == [
            .init(startMs: 1_000, endMs: 1_010, count: 50), .init(startMs: 2_000, endMs: 2_010, count: 60),
        ])
        #expect(metrics.responsiveness["histogrammedAppHangTime"]?.total == 50)
        let diagnostics = try Parser.diagnostics(Data(Self.appleDiagnostics.utf8))
        #expect(diagnostics.hangs.map(\.durationMs) == [20_000])
        #expect(diagnostics.launches.map(\.durationMs) == [20_000])
        #expect(diagnostics.hangs.map(\.frameCount) == [2])
        typealias Mirror = MetricKitConsumerMirrors
        let meter = try Mirror.decoder().decode(Mirror.MeterDiagnosticPayload.self, from: Data(Self.appleDiagnostics.utf8))
        #expect(meter.hangDiagnostics?.first?.diagnosticMetaData.hangDuration == "20 sec")
        _ = try Mirror.decoder().decode(Mirror.MetricPayload.self, from: Data(Self.appleMetrics.utf8))
        // A launchprof diagnostic with decimals, as launchprof wrote before, is what the schema now refuses.
        let builder = MetricKitPayloadBuilder(context: ExportSamples.context, launchDiagnosticThresholdNs: 0)
        let good = String(
            decoding: try builder.encodedPayloads(ExportSamples.report([ExportSamples.run(index: 0, firstFrameMs: 12)])).diagnostics,
            as: UTF8.self)
        let decimals = good.replacingOccurrences(of: "\"12 ms\"", with: "\"12.5 ms\"")
        #expect(decimals != good)
        #expect(try SchemaValidator.problems(Array(decimals.utf8), against: .metricKitDiagnostics) != nil)
    }
}
