import LaunchprofAnalysis
import LaunchprofELF
import LaunchprofReport

/// One side of `launchprof compare`: a bench folder (its `suite.json` and reports) or a single
/// report file.
public struct BenchFolder: Sendable {
    /// A launch of the side: its report (nil when the launch failed), counts and thresholds.
    public struct Entry: Sendable {
        public var name: String
        public var report: LaunchReport?
        public var counts: LaunchCounts?
        public var thresholds: [String: ComparisonSettings.Threshold]
        public var error: String?
        /// The launch's own minimum effect, over the suite's.
        public var minEffectPercent: Double? = nil
        public var minEffectNs: UInt64? = nil
        /// The suite's program and mode, for a launch without a report.
        public var program: String? = nil
        public var mode: String = "warm"
    }

    public var path: String
    public var entries: [Entry]
    /// The suite's comparison settings, for a folder.
    public var settings: ComparisonSettings?
    public var isFolder: Bool

    /// The folder `BenchRunner` just wrote, from its outcomes (no need to read it back).
    public init(directory: String, outcomes: [BenchRunner.Outcome], settings: ComparisonSettings) {
        path = directory
        entries = outcomes.map {
            Entry(
                name: $0.entry.name, report: $0.report, counts: $0.entry.counts, thresholds: $0.entry.thresholds,
                error: $0.entry.error, minEffectPercent: $0.entry.minEffectPercent, minEffectNs: $0.entry.minEffectNs,
                program: $0.program, mode: $0.entry.mode)
        }
        self.settings = settings
        isFolder = true
    }

    init(path: String, entries: [Entry], settings: ComparisonSettings?, isFolder: Bool) {
        self.path = path
        self.entries = entries
        self.settings = settings
        self.isFolder = isFolder
    }

    /// Loads a folder or a report, refusing unknown schema versions.
    public static func load(_ path: String) throws(LaunchReportError) -> BenchFolder {
        guard ReportFiles.isDirectory(path) else {
            let report = try ReportFiles.readReport(path)
            return BenchFolder(
                path: path, entries: [Entry(name: path, report: report, counts: nil, thresholds: [:], error: nil)],
                settings: nil, isFolder: false)
        }
        let summaryPath = path + "/suite.json"
        let summary = try BenchSummary.decode(try ReportFiles.read(summaryPath), path: summaryPath)
        var entries: [Entry] = []
        for entry in summary.entries {
            let report = try entry.report.map { file throws(LaunchReportError) in try ReportFiles.readReport(path + "/" + file) }
            entries.append(
                Entry(
                    name: entry.name, report: report, counts: entry.counts, thresholds: entry.thresholds,
                    error: entry.error, minEffectPercent: entry.minEffectPercent, minEffectNs: entry.minEffectNs,
                    mode: entry.mode))
        }
        return BenchFolder(path: path, entries: entries, settings: summary.settings, isFolder: true)
    }

    /// `bench --baseline`: a bench folder (not a single report), read before any launch.
    public static func loadBaseline(_ path: String) throws -> BenchFolder {
        let folder = try load(path)
        guard folder.isFolder else { throw BenchError.notABenchFolder(path: path) }
        return folder
    }

    /// Compares `new` against `base` entry by entry (matched by name), with `settings` and each
    /// new entry's thresholds. Without a base, only the thresholds' limits apply.
    public static func compare(base: BenchFolder?, new: BenchFolder, settings: ComparisonSettings) -> SuiteComparison {
        var comparisons: [ReportComparison] = []
        var settings = settings
        if let reference = settings.reference, let base, base.isFolder,
            let baseReport = base.entries.first(where: { $0.name == reference })?.report,
            let newReport = new.entries.first(where: { $0.name == reference })?.report
        {
            settings.driftPercent = ReportComparison.drift(base: baseReport, new: newReport, settings: settings)
        }
        for entry in new.entries {
            var entrySettings = settings
            entrySettings.thresholds = entry.thresholds
            if let percent = entry.minEffectPercent { entrySettings.minEffectPercent = percent }
            if let ns = entry.minEffectNs { entrySettings.minEffectNs = ns }
            let baseEntry: Entry?
            if let base {
                baseEntry = base.isFolder ? base.entries.first { $0.name == entry.name } : base.entries.first
            } else {
                baseEntry = nil
            }
            guard let report = entry.report else {
                comparisons.append(
                    ReportComparison(
                        failedLaunch: entry.name, program: entry.program ?? entry.name, cold: entry.mode == "cold",
                        reason: entry.error ?? "the launch failed", settings: entrySettings))
                continue
            }
            var comparison = ReportComparison(
                name: entry.name, base: baseEntry?.report, new: report, baseCounts: baseEntry?.counts,
                newCounts: entry.counts, settings: entrySettings, soname: Self.soname)
            if let base, baseEntry?.report?.runs.isEmpty ?? true {
                // A launch the baseline lacks (failed in, or has no runs of) cannot pass as unchanged.
                let why = baseEntry == nil
                    ? "not in the baseline '\(base.path)'"
                    : baseEntry?.report == nil ? "failed in the baseline '\(base.path)'" : "no runs in the baseline '\(base.path)'"
                comparison.changes.insert(
                    .init(key: "baseline", baseRuns: 0, newRuns: report.runs.count, verdict: .noVerdict, reason: why), at: 0)
                comparison.verdict = ComparisonVerdict.combining([comparison.verdict, .noVerdict])
            }
            comparisons.append(comparison)
        }
        let missing = base.map { base in
            base.isFolder ? base.entries.map(\.name).filter { name in !new.entries.contains { $0.name == name } } : []
        } ?? []
        return SuiteComparison(entries: comparisons, missing: missing)
    }

    /// A library's DT_SONAME, read from the file where it still is (nil if it is gone or has none):
    /// how `compare` knows `../base/build/libx.so.1.2` and `build/libx.so.1.3` for one library.
    static func soname(_ path: String) -> String? {
        (try? ELFImage.read(path: path))?.dynamic.soname
    }
}
