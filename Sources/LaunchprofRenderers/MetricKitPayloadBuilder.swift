import LaunchprofReport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Builds MetricKit's two payloads from a report's runs: `MXMetricPayload` histograms of the
/// launch metrics and hang times, and `MXDiagnosticPayload` entries for slow launches and hangs.
///
/// Bucket widths (see `docs/formats/metrickit.md`): 10 ms for the launch and resume histograms, the
/// width MetricKit's own launch histograms use, so launchprof's buckets line up with an iOS
/// app's in the same dashboard and a 20–40 ms Linux launch still spreads over a few buckets;
/// 100 ms for hangs, which start at 250 ms and run to seconds.
public struct MetricKitPayloadBuilder: Sendable {
    /// Facts about the session that the report does not hold.
    public struct Context: Sendable, Equatable {
        /// The distribution's name, e.g. `PRETTY_NAME` from /etc/os-release.
        public var distribution: String
        /// `uname -m`.
        public var architecture: String
        /// The locale's territory ("US"), nil under C/POSIX (written as "ZZ", unknown region).
        public var regionFormat: String?
        /// Seconds since the epoch (UTC) when the first run started and the last one ended.
        public var beganAtSeconds: Int64
        public var endedAtSeconds: Int64

        public init(
            distribution: String, architecture: String, regionFormat: String?, beganAtSeconds: Int64,
            endedAtSeconds: Int64
        ) {
            self.distribution = distribution
            self.architecture = architecture
            self.regionFormat = regionFormat
            self.beganAtSeconds = beganAtSeconds
            self.endedAtSeconds = endedAtSeconds
        }
    }

    public static let launchBucketWidthMs: UInt64 = 10
    public static let hangBucketWidthMs: UInt64 = 100
    /// Apple's launch-time goal (first frame within 400 ms): a slower launch gets a diagnostic.
    public static let defaultLaunchDiagnosticThresholdNs: UInt64 = 400_000_000
    /// What launchprof writes as `appVersion`: an ELF file carries no version.
    public static let unknownAppVersion = "unknown"

    public var context: Context
    /// A launch whose time to first frame (from the resume, for a prewarmed one) is at least
    /// this gets an `appLaunchDiagnostics` entry.
    public var launchDiagnosticThresholdNs: UInt64

    public init(context: Context, launchDiagnosticThresholdNs: UInt64 = Self.defaultLaunchDiagnosticThresholdNs) {
        self.context = context
        self.launchDiagnosticThresholdNs = launchDiagnosticThresholdNs
    }

    /// The metric payload. Each run counts once in the launch histograms: a prewarmed run (one
    /// with an optimized time) under the optimized key, any other under the ordinary one; only
    /// runs with extended-launch tasks under the extended launch.
    public func metricPayload(_ report: LaunchReport) -> MetricKitMetricPayload {
        let runs = report.runs
        // Issue 22: a timed-out, crashed or early-exited run is not a launch.
        let launches = runs.filter(\.countsAsLaunch)
        let prewarmed = launches.filter { $0.metrics.optimizedTimeToFirstFrameNs != nil }
        let ordinary = launches.filter { $0.metrics.optimizedTimeToFirstFrameNs == nil }
        let width = Self.launchBucketWidthMs
        var launch = MetricKitMetricPayload.LaunchMetrics(
            histogrammedTimeToFirstDrawKey: MetricKitHistogram(
                valuesNs: ordinary.compactMap(\.metrics.timeToFirstFrameNs), bucketWidthMs: width),
            histogrammedOptimizedTimeToFirstDrawKey: MetricKitHistogram(
                valuesNs: prewarmed.compactMap(\.metrics.optimizedTimeToFirstFrameNs), bucketWidthMs: width),
            histogrammedResumeTime: MetricKitHistogram(
                valuesNs: runs.compactMap(\.metrics.resumeTimeNs), bucketWidthMs: width))
        launch.histogrammedExtendedLaunch = MetricKitHistogram(
            valuesNs: launches.filter(Self.hasExtendedTasks).compactMap(\.metrics.extendedLaunchNs), bucketWidthMs: width)
        let hangs = MetricKitHistogram(
            valuesNs: runs.flatMap(Self.hangs).map(\.durationNs), bucketWidthMs: Self.hangBucketWidthMs)
        return MetricKitMetricPayload(
            appVersion: Self.unknownAppVersion,
            timeStampBegin: Self.timestamp(context.beganAtSeconds),
            timeStampEnd: Self.timestamp(context.endedAtSeconds),
            metaData: metaData(report),
            applicationLaunchMetrics: launch.isEmpty ? nil : launch,
            applicationResponsivenessMetrics: hangs.map { .init(histogrammedAppHangTime: $0) })
    }

    /// The diagnostic payload: a launch diagnostic per run at or over the threshold, a hang
    /// diagnostic per hang flag, in run order.
    public func diagnosticPayload(_ report: LaunchReport) -> MetricKitDiagnosticPayload {
        var launches: [MetricKitDiagnosticPayload.LaunchDiagnostic] = []
        var hangs: [MetricKitDiagnosticPayload.HangDiagnostic] = []
        for run in report.runs {
            if run.countsAsLaunch, let duration = run.metrics.optimizedTimeToFirstFrameNs ?? run.metrics.timeToFirstFrameNs,
                duration >= launchDiagnosticThresholdNs
            {
                var meta = metaData(report)
                meta.appVersion = Self.unknownAppVersion
                meta.pid = run.pid
                meta.launchDuration = Self.milliseconds(duration)
                launches.append(.init(diagnosticMetaData: meta, callStackTree: run.callStackTree ?? .empty))
            }
            for hang in Self.hangs(run) {
                var meta = metaData(report)
                meta.appVersion = Self.unknownAppVersion
                meta.pid = run.pid
                meta.hangDuration = Self.milliseconds(hang.durationNs)
                hangs.append(.init(diagnosticMetaData: meta, callStackTree: run.callStackTree ?? .empty))
            }
        }
        return MetricKitDiagnosticPayload(
            timeStampBegin: Self.timestamp(context.beganAtSeconds),
            timeStampEnd: Self.timestamp(context.endedAtSeconds),
            appLaunchDiagnostics: launches.isEmpty ? nil : launches,
            hangDiagnostics: hangs.isEmpty ? nil : hangs)
    }

    /// Both payloads as the files hold them: pretty-printed, sorted keys, a final newline.
    public func encodedPayloads(_ report: LaunchReport) throws(LaunchReportError) -> (metrics: [UInt8], diagnostics: [UInt8]) {
        (try Self.encodePretty(metricPayload(report)), try Self.encodePretty(diagnosticPayload(report)))
    }

    func metaData(_ report: LaunchReport) -> MetricKitMetaData {
        MetricKitMetaData(
            appBuildVersion: report.target.buildID ?? "", bundleIdentifier: report.target.path,
            deviceType: report.host.cpu, osVersion: "\(context.distribution), Linux \(report.host.kernel)",
            platformArchitecture: context.architecture,
            regionFormat: context.regionFormat ?? MetricKitMetaData.unknownRegion)
    }

    static func hasExtendedTasks(_ run: LaunchRun) -> Bool {
        run.phases.contains { $0.name == LaunchPhase.extendedLaunch }
    }

    static func hangs(_ run: LaunchRun) -> [LaunchFlag] {
        (run.flags ?? []).filter { $0.kind == .hang }
    }

    /// "16 ms": whole milliseconds, rounded to the nearest (half up), as MetricKit writes
    /// durations. ms rather than MetricKit's "sec" for hangs too: a 250–999 ms hang would
    /// otherwise read "0 sec" or "1 sec"; the unit is in the string.
    static func milliseconds(_ ns: UInt64) -> String {
        "\(ns / 1_000_000 + (ns % 1_000_000 >= 500_000 ? 1 : 0)) ms"
    }

    /// MetricKit's "yyyy-MM-dd HH:mm:ss", in UTC, computed from the civil calendar directly so
    /// no locale or time zone database is involved.
    public static func timestamp(_ secondsSinceEpoch: Int64) -> String {
        let date = UTCDate(secondsSinceEpoch: secondsSinceEpoch)
        return date.dayText + " " + date.timeText
    }

    /// Pretty-printed JSON with sorted keys and a final newline (payloads are read by people too).
    static func encodePretty(_ value: some Encodable) throws(LaunchReportError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value)) + [UInt8(ascii: "\n")]
        } catch {
            throw .encodingFailed(reason: String(describing: error))
        }
    }
}
