#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `suite.json` in a bench folder: which report belongs to which launch, each launch's
/// deterministic counts and thresholds, and the comparison settings, so a later `compare` of
/// two folders needs nothing but the folders.
public struct BenchSummary: Sendable, Equatable, Codable {
    /// Bumped on any incompatible change of names or meaning.
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    /// The suite file the folder was made from.
    public var suite: String
    public var entries: [Entry]
    public var settings: ComparisonSettings

    public init(suite: String, entries: [Entry], settings: ComparisonSettings) {
        schemaVersion = Self.currentSchemaVersion
        self.suite = suite
        self.entries = entries
        self.settings = settings
    }

    /// One launch of the suite.
    public struct Entry: Sendable, Equatable, Codable {
        public var name: String
        /// The LaunchReport's file name in the folder; nil when the launch could not be made.
        public var report: String?
        /// From `inspect` on the entry's program; nil when it could not be inspected.
        public var counts: LaunchCounts?
        /// `warm` or `cold`.
        public var mode: String
        public var runs: Int
        public var failedRuns: Int
        /// Why the launch failed, when it did.
        public var error: String?
        /// Limits keyed like `LaunchReport.samples()`.
        public var thresholds: [String: ComparisonSettings.Threshold]
        /// The launch's own minimum effect, over the suite's.
        public var minEffectPercent: Double?
        public var minEffectNs: UInt64?

        public init(
            name: String, report: String?, counts: LaunchCounts?, mode: String, runs: Int, failedRuns: Int,
            error: String? = nil, thresholds: [String: ComparisonSettings.Threshold] = [:],
            minEffectPercent: Double? = nil, minEffectNs: UInt64? = nil
        ) {
            self.minEffectPercent = minEffectPercent
            self.minEffectNs = minEffectNs
            self.name = name
            self.report = report
            self.counts = counts
            self.mode = mode
            self.runs = runs
            self.failedRuns = failedRuns
            self.error = error
            self.thresholds = thresholds
        }
    }

    /// Decodes a `suite.json`, refusing a schema version it does not know.
    public static func decode(_ bytes: [UInt8], path: String) throws(LaunchReportError) -> BenchSummary {
        struct Probe: Decodable { var schemaVersion: Int? }
        let data = Data(bytes)
        let version: Int?
        do {
            version = try JSONDecoder().decode(Probe.self, from: data).schemaVersion
        } catch {
            throw .invalidReport(path: path, reason: "it is not a bench summary (\(LaunchReportDecoder.describe(error)))")
        }
        guard let version else { throw .invalidReport(path: path, reason: "the bench summary has no schemaVersion") }
        guard version == currentSchemaVersion else {
            throw .unsupportedSchemaVersion(path: path, found: version, supported: currentSchemaVersion)
        }
        do {
            return try JSONDecoder().decode(BenchSummary.self, from: data)
        } catch {
            throw .invalidReport(path: path, reason: LaunchReportDecoder.describe(error))
        }
    }

    /// Sorted, compact JSON.
    public func encoded() throws(LaunchReportError) -> [UInt8] {
        try LaunchReportWriter.encodeValue(self) + [UInt8(ascii: "\n")]
    }
}
