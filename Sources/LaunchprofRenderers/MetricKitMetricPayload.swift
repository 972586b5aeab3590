import LaunchprofReport

/// `metrics.json`: an `MXMetricPayload` (its `jsonRepresentation`) with MetricKit's exact keys.
/// A metric with no data is left out, and so is a group with no metric.
public struct MetricKitMetricPayload: Sendable, Equatable, Codable {
    /// ELF carries no version: "unknown" (the build-id in `metaData` names the build).
    public var appVersion: String
    /// "yyyy-MM-dd HH:mm:ss", UTC: when the first run started.
    public var timeStampBegin: String
    /// When the last run ended.
    public var timeStampEnd: String
    public var metaData: MetricKitMetaData
    public var applicationLaunchMetrics: LaunchMetrics?
    public var applicationResponsivenessMetrics: ResponsivenessMetrics?

    public init(
        appVersion: String, timeStampBegin: String, timeStampEnd: String, metaData: MetricKitMetaData,
        applicationLaunchMetrics: LaunchMetrics?, applicationResponsivenessMetrics: ResponsivenessMetrics?
    ) {
        self.appVersion = appVersion
        self.timeStampBegin = timeStampBegin
        self.timeStampEnd = timeStampEnd
        self.metaData = metaData
        self.applicationLaunchMetrics = applicationLaunchMetrics
        self.applicationResponsivenessMetrics = applicationResponsivenessMetrics
    }

    /// `MXAppLaunchMetric`; the JSON keys differ from MetricKit's property names on purpose.
    public struct LaunchMetrics: Sendable, Equatable, Codable {
        /// Ordinary launches: spawn → first frame.
        public var histogrammedTimeToFirstDrawKey: MetricKitHistogram?
        /// Prewarmed launches: resume → first frame.
        public var histogrammedOptimizedTimeToFirstDrawKey: MetricKitHistogram?
        /// Resume from background → active.
        public var histogrammedResumeTime: MetricKitHistogram?
        /// Launches with extended-launch tasks: spawn → first frame and every task finished.
        public var histogrammedExtendedLaunch: MetricKitHistogram?

        public init(
            histogrammedTimeToFirstDrawKey: MetricKitHistogram? = nil,
            histogrammedOptimizedTimeToFirstDrawKey: MetricKitHistogram? = nil,
            histogrammedResumeTime: MetricKitHistogram? = nil, histogrammedExtendedLaunch: MetricKitHistogram? = nil
        ) {
            self.histogrammedTimeToFirstDrawKey = histogrammedTimeToFirstDrawKey
            self.histogrammedOptimizedTimeToFirstDrawKey = histogrammedOptimizedTimeToFirstDrawKey
            self.histogrammedResumeTime = histogrammedResumeTime
            self.histogrammedExtendedLaunch = histogrammedExtendedLaunch
        }

        var isEmpty: Bool {
            histogrammedTimeToFirstDrawKey == nil && histogrammedOptimizedTimeToFirstDrawKey == nil
                && histogrammedResumeTime == nil && histogrammedExtendedLaunch == nil
        }
    }

    /// `MXAppResponsivenessMetric`.
    public struct ResponsivenessMetrics: Sendable, Equatable, Codable {
        /// One count per hang the sampler flagged.
        public var histogrammedAppHangTime: MetricKitHistogram?

        public init(histogrammedAppHangTime: MetricKitHistogram? = nil) {
            self.histogrammedAppHangTime = histogrammedAppHangTime
        }
    }
}
