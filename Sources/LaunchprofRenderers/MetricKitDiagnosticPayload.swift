import LaunchprofReport

/// `diagnostics.json`: an `MXDiagnosticPayload` (its `jsonRepresentation`) with MetricKit's
/// keys: slow launches and hangs, each with the sampled call stack tree (an empty one when the
/// sampler did not run: MetricKit never writes a diagnostic without a tree).
/// An empty list is left out, as MetricKit leaves out a diagnostic kind it has none of.
public struct MetricKitDiagnosticPayload: Sendable, Equatable, Codable {
    public var timeStampBegin: String
    public var timeStampEnd: String
    public var appLaunchDiagnostics: [LaunchDiagnostic]?
    public var hangDiagnostics: [HangDiagnostic]?

    public init(
        timeStampBegin: String, timeStampEnd: String, appLaunchDiagnostics: [LaunchDiagnostic]?,
        hangDiagnostics: [HangDiagnostic]?
    ) {
        self.timeStampBegin = timeStampBegin
        self.timeStampEnd = timeStampEnd
        self.appLaunchDiagnostics = appLaunchDiagnostics
        self.hangDiagnostics = hangDiagnostics
    }

    /// MetricKit's diagnostic format version.
    public static let diagnosticVersion = "1.0.0"

    /// `MXAppLaunchDiagnostic`: one launch slower than the threshold.
    public struct LaunchDiagnostic: Sendable, Equatable, Codable {
        public var version: String
        public var diagnosticMetaData: MetricKitMetaData
        /// The run's sampled stacks; `CallStackTree.empty` when the sampler did not run.
        public var callStackTree: CallStackTree

        public init(
            version: String = MetricKitDiagnosticPayload.diagnosticVersion, diagnosticMetaData: MetricKitMetaData,
            callStackTree: CallStackTree
        ) {
            self.version = version
            self.diagnosticMetaData = diagnosticMetaData
            self.callStackTree = callStackTree
        }
    }

    /// `MXHangDiagnostic`: one hang the sampler flagged.
    public struct HangDiagnostic: Sendable, Equatable, Codable {
        public var version: String
        public var diagnosticMetaData: MetricKitMetaData
        /// The run's sampled stacks (the sampler keeps one tree per run).
        public var callStackTree: CallStackTree
        /// "Main Runloop Hang": the flag is about the main thread.
        public var hangType: String

        public init(
            version: String = MetricKitDiagnosticPayload.diagnosticVersion, diagnosticMetaData: MetricKitMetaData,
            callStackTree: CallStackTree, hangType: String = "Main Runloop Hang"
        ) {
            self.version = version
            self.diagnosticMetaData = diagnosticMetaData
            self.callStackTree = callStackTree
            self.hangType = hangType
        }
    }
}
