import Foundation
import Testing

@testable import LaunchprofCore
@testable import LaunchprofAnalysis
@testable import LaunchprofReport
@testable import LaunchprofRenderers

/// The bench schemas in docs/formats/schema against the model and the parser: every stored property
/// of the summary and comparison types is named in its schema, every key the suite parser reads
/// is in the suite schema and no other, the enums list the model's cases, and the suites a user
/// meets (the documentation's, the repository's own) validate.
@Suite("bench: schemas")
struct BenchSchemaTests {
    typealias Schemas = ReportSchemaTests

    static func definition(_ schema: [String: Any], _ name: String) throws -> [String: Any] {
        try #require((schema["$defs"] as? [String: Any])?[name] as? [String: Any], "$defs/\(name)")
    }

    static func property(_ object: [String: Any], _ name: String) throws -> [String: Any] {
        try #require((object["properties"] as? [String: Any])?[name] as? [String: Any], "properties/\(name)")
    }

    static func enumeration(_ object: [String: Any]) throws -> [String] {
        try #require(object["enum"] as? [String], "an enum")
    }

    static var metricNames: [String] { LaunchMetrics().named.map(\.name) }

    static func expectSame(
        _ keys: Set<String>, _ schema: Set<String>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(
            keys == schema,
            "\(what): \(keys.subtracting(schema).sorted()) not in bench-suite.schema.json, \(schema.subtracting(keys).sorted()) only there",
            sourceLocation: sourceLocation)
    }

    /// A summary with every optional field set: a measured launch and one that could not be made.
    static func fullSummary() -> BenchSummary {
        let settings = ComparisonSettings(
            confidence: 0.9, minEffectPercent: 8, minEffectNs: 250_000,
            thresholds: ["timeToFirstFrameNs": .init(maxMedianNs: 50_000_000, maxRegressionPercent: 10)])
        return BenchSummary(
            suite: "/ci/suite.json",
            entries: [
                .init(
                    name: "app", report: "app.json", counts: LaunchCounts(objects: 7, relocations: 21_627, initializers: 3),
                    mode: "cold", runs: 20, failedRuns: 1, error: "1 of 20 runs failed",
                    thresholds: ["phase:didFinishLaunching": .init(maxRegressionPercent: 15)], minEffectPercent: 200,
                    minEffectNs: 5_000_000),
                .init(name: "missing", report: nil, counts: nil, mode: "warm", runs: 0, failedRuns: 0, error: "not found"),
            ],
            settings: settings)
    }

    /// A comparison with every optional field set: a regression with a baseline, counts and
    /// limits, a launch that could not be made, and a launch only the baseline has.
    static func fullComparison() -> SuiteComparison {
        var generator = SeededGenerator(seed: 11)
        let base = BenchSamples.report(runs: 20, workNs: 8_000_000, noise: 0.02, generator: &generator)
        let new = BenchSamples.report(runs: 20, workNs: 12_000_000, noise: 0.02, generator: &generator)
        let settings = ComparisonSettings(thresholds: ["timeToFirstFrameNs": .init(maxMedianNs: 1_000_000_000, maxRegressionPercent: 10)])
        let counts = LaunchCounts(objects: 5, relocations: 1_200, initializers: 3)
        var more = counts
        more.relocations += 1
        return SuiteComparison(
            entries: [
                ReportComparison(name: "app", base: base, new: new, baseCounts: counts, newCounts: more, settings: settings),
                ReportComparison(failedLaunch: "gone-app", program: "/opt/app", cold: true, reason: "not found", settings: settings),
            ],
            missing: ["renamed"])
    }

    @Test("every field of BenchSummary is in bench-summary.schema.json")
    func summaryNamesEveryField() throws {
        let schema = try Schemas.schema(.benchSummary)
        let summary = Self.fullSummary()
        try Schemas.expectNamed(summary, in: schema, nil)
        try Schemas.expectNamed(summary.entries[0], in: schema, "Entry")
        try Schemas.expectNamed(try #require(summary.entries[0].counts), in: schema, "LaunchCounts")
        try Schemas.expectNamed(summary.settings, in: schema, "ComparisonSettings")
        try Schemas.expectNamed(ComparisonSettings.Threshold(), in: schema, "Threshold")
        let mode = try Self.property(try Self.definition(schema, "Entry"), "mode")
        #expect(try Self.enumeration(mode) == BenchMode.allCases.map(\.rawValue), "Entry.mode lists BenchMode's cases")
        #expect(try Self.enumeration(try Self.definition(schema, "MetricName")) == Self.metricNames)
        try SchemaValidator.expectValid(try summary.encoded(), against: .benchSummary, "full summary")
    }

    @Test("every field of the comparison model is in comparison.schema.json")
    func comparisonNamesEveryField() throws {
        let schema = try Schemas.schema(.comparison)
        let comparison = Self.fullComparison()
        let entry = comparison.entries[0]
        let change = try #require(entry.changes.first { $0.shift != nil && $0.reason != nil })
        try Schemas.expectNamed(comparison, in: schema, nil)
        try Schemas.expectNamed(entry, in: schema, "ReportComparison")
        try Schemas.expectNamed(try #require(entry.base), in: schema, "Side")
        try Schemas.expectNamed(change, in: schema, "QuantityChange")
        try Schemas.expectNamed(try #require(change.shift), in: schema, "ShiftEstimate")
        try Schemas.expectNamed(entry.counts[0], in: schema, "CountChange")
        try Schemas.expectNamed(entry.settings, in: schema, "ComparisonSettings")
        try Schemas.expectNamed(ComparisonSettings.Threshold(), in: schema, "Threshold")
        #expect(try Self.enumeration(try Self.definition(schema, "ComparisonVerdict")) == ComparisonVerdict.allCases.map(\.rawValue))
        #expect(try Self.enumeration(try Self.definition(schema, "Verdict")) == ReportComparison.QuantityChange.Verdict.allCases.map(\.rawValue))
        #expect(try Self.enumeration(try Self.definition(schema, "MetricName")) == Self.metricNames)
        let countChange = try Self.definition(schema, "CountChange")
        #expect(try Self.enumeration(try Self.property(countChange, "name")) == LaunchCounts(objects: 0, relocations: 0, initializers: 0).named.map(\.name))
        let encoded = try ComparisonJSONRenderer().render(comparison)
        #expect(encoded.contains("\"medianChangePercent\"") && encoded.contains("\"buildID\"") && encoded.contains("\"missing\":[\"renamed\"]"))
        try SchemaValidator.expectValid(Array(encoded.utf8), against: .comparison, "full comparison")
    }

    @Test("the summary and comparison schemas refuse what the model cannot write")
    func summaryAndComparisonRejects() throws {
        let summary = String(decoding: try Self.fullSummary().encoded(), as: UTF8.self)
        for (from, to) in [
            ("\"mode\":\"cold\"", "\"mode\":\"hot\""), ("\"failedRuns\":1", "\"failedRuns\":-1"),
            ("\"schemaVersion\":1", "\"schemaVersion\":2"), ("\"maxRegressionPercent\":15", "\"maxRegresionPercent\":15"),
            ("\"phase:didFinishLaunching\"", "\"didFinishLaunching\""),
        ] {
            let bad = summary.replacingOccurrences(of: from, with: to)
            #expect(bad != summary, "\(from) occurs")
            #expect(try SchemaValidator.problems(Array(bad.utf8), against: .benchSummary) != nil, "\(to) is refused")
        }
        let comparison = try ComparisonJSONRenderer().render(Self.fullComparison())
        for (from, to) in [
            ("\"verdict\":\"regression\"", "\"verdict\":\"worse\""), ("\"schemaVersion\":1", "\"schemaVersion\":2"),
            ("\"key\":\"timeToMainNs\"", "\"key\":\"timeToMain\""), ("\"confidence\":0.95", "\"confidence\":95"),
            ("\"missing\":", "\"absent\":"),
        ] {
            let bad = comparison.replacingOccurrences(of: from, with: to)
            #expect(bad != comparison, "\(from) occurs")
            #expect(try SchemaValidator.problems(Array(bad.utf8), against: .comparison) != nil, "\(to) is refused")
        }
    }

    /// The schema and the parser know the same keys: the suite that sets every key the parser
    /// reads uses exactly the schema's properties, the Launch model's fields are all keys, and
    /// the enums are the model's.
    @Test("bench-suite.schema.json lists the keys BenchSuite reads, and no other")
    func suiteSchemaMatchesTheParser() throws {
        let schema = try Schemas.schema(.benchSuite)
        let full = try #require(try JSONSerialization.jsonObject(with: Data(BenchSuiteTests.everyKey.utf8)) as? [String: Any])
        let launches = try #require(full["launches"] as? [[String: Any]])
        let launch = try #require(launches.first)
        let threshold = try #require((launch["thresholds"] as? [String: [String: Any]])?["timeToFirstFrameNs"])
        let launchSchema = try Self.definition(schema, "Launch")
        try Self.expectSame(Set(full.keys), try Schemas.properties(schema, nil), "BenchSuiteTests.everyKey's top level")
        // Between them its launches set every key (`hold` only goes with a prewarm launch).
        try Self.expectSame(Set(launches.flatMap(\.keys)), try Schemas.properties(schema, "Launch"), "BenchSuiteTests.everyKey's launches")
        try Self.expectSame(Set(threshold.keys), try Schemas.properties(schema, "Threshold"), "BenchSuiteTests.everyKey's threshold")
        // A field added to the model is a key (spelt in seconds for the timeout).
        let fields = Set(Schemas.labels(BenchSuite.Launch(name: "a", program: "b")).map { $0 == "timeoutNs" ? "timeout" : $0 })
        try Self.expectSame(fields, try Schemas.properties(schema, "Launch"), "BenchSuite.Launch's fields")
        try Self.expectSame(Schemas.labels(ComparisonSettings.Threshold()), try Schemas.properties(schema, "Threshold"), "Threshold's fields")
        #expect(try Self.enumeration(try Self.property(launchSchema, "mode")) == BenchMode.allCases.map(\.rawValue))
        #expect(try Self.enumeration(try Self.definition(schema, "MetricName")) == Self.metricNames)
        try SchemaValidator.expectValid(Array(BenchSuiteTests.everyKey.utf8), against: .benchSuite, "every key")
    }

    /// Every mistake BenchSuite refuses the schema refuses too — an unknown or misspelt key
    /// above all — except two launches of one name, which JSON Schema cannot express.
    @Test("bench-suite.schema.json refuses the suites BenchSuite refuses")
    func suiteSchemaRejectsTheParsersMistakes() throws {
        for (text, expected) in BenchSuiteTests.mistakes {
            let problems = try SchemaValidator.problems(Array(text.utf8), against: .benchSuite)
            if expected == "names two launches" {
                #expect(problems == nil, "a duplicate name is launchprof's check alone")
            } else {
                #expect(problems != nil, "the schema accepts \(text), which BenchSuite refuses (\(expected))")
            }
        }
        for name in ["suite", ".hidden", "a b", "é"] {
            let text = #"{"version": 1, "launches": [{"name": "\#(name)", "program": "true"}]}"#
            #expect(throws: BenchError.self, "\(name)") { try BenchSuite.parse(Array(text.utf8), path: "s.json") }
            #expect(try SchemaValidator.problems(Array(text.utf8), against: .benchSuite) != nil, "name \(name)")
        }
        for ready in ["auto", "automatic", "exit", "hook", "listen", "stdout:^ready$", "stderr:up"] {
            let text = #"{"version": 1, "launches": [{"name": "a", "program": "true", "ready": "\#(ready)"}]}"#
            #expect(throws: Never.self) { try BenchSuite.parse(Array(text.utf8), path: "s.json") }
            try SchemaValidator.expectValid(Array(text.utf8), against: .benchSuite, "ready \(ready)")
        }
    }

    /// The documentation's example suites (README.md and docs/), and every suite file and bench folder in the repository
    /// (Benchmarks/ci-suite.json, the committed baseline), validate and parse.
    @Test("the suites and summaries a user meets validate")
    func suitesInTheRepositoryValidate() throws {
        let root = FixtureBuilder.packageRoot
        let docs = root.appendingPathComponent("docs")
        let guides = ["README.md"] + (try FileManager.default.contentsOfDirectory(atPath: docs.path))
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        var documentedSuites = 0
        for guide in guides {
            let text = try String(contentsOf: root.appendingPathComponent(guide), encoding: .utf8)
            let blocks = text.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
            for suite in blocks where suite.contains("\"launches\"") {
                documentedSuites += 1
                try SchemaValidator.expectValid(Array(suite.utf8), against: .benchSuite, "\(guide)'s suite")
                #expect(throws: Never.self, "\(guide)") { try BenchSuite.parse(Array(suite.utf8), path: guide) }
            }
        }
        #expect(documentedSuites > 0, "the guides show a suite")

        var suites: [String] = []
        var summaries: [String] = []
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "json",
                let data = try? Data(contentsOf: url), data.count < 1 << 20,
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { continue }
            let relative = url.path.hasPrefix(root.path + "/") ? String(url.path.dropFirst(root.path.count + 1)) : url.path
            if object["launches"] != nil {
                suites.append(relative)
                try SchemaValidator.expectValid(Array(data), against: .benchSuite, relative)
                #expect(throws: Never.self, "\(relative)") { try BenchSuite.parse(Array(data), path: url.path) }
            } else if object["entries"] != nil, object["suite"] != nil {
                summaries.append(relative)
                try SchemaValidator.expectValid(Array(data), against: .benchSummary, relative)
                let summary = try BenchSummary.decode(Array(data), path: relative)
                for report in summary.entries.compactMap(\.report) {
                    try SchemaValidator.expectValid(
                        file: url.deletingLastPathComponent().appendingPathComponent(report).path, against: .launchReport)
                }
            }
        }
        #expect(suites.contains("Benchmarks/ci-suite.json"), "\(suites)")
        #expect(summaries.contains("Benchmarks/ci-baseline/suite.json"), "\(summaries)")
    }
}
