import Foundation
import LaunchprofCore
import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// docs/formats/schema/calibration.schema.json against the model: every stored property of each
/// calibration type is in its `$defs` entry and no other, exactly the non-optional ones are
/// required, the file `CalibrationStore` writes validates, and the schema refuses a misspelt key
/// or a wrong type.
@Suite("Calibration: schema")
struct CalibrationSchemaTests {
    typealias Schemas = ReportSchemaTests

    /// A calibration as `launchprof calibrate` makes one, every optional field set (the host's
    /// name), fitted on exact made-up points and stamped by the calibrator's own clock format.
    static func fullCalibration() throws -> HostCalibration {
        let host = LaunchReport.Host(kernel: "6.18.0-1-amd64", cpu: "AMD EPYC 7B13", cores: 2, libc: "glibc 2.36", name: "builder")
        let points = CostModelFitTests.points(20, coefficients: CostModelFitTests.truth)
        return try #require(
            HostCalibration.fitted(
                points, host: host, measuredAt: Calibrator.utcTimestamp(), runsPerPoint: 7, durationNs: 2_500_000_000))
    }

    /// The stored properties of `value` and whether each is an Optional.
    static func fields(_ value: Any) -> [String: Bool] {
        var fields: [String: Bool] = [:]
        for child in Mirror(reflecting: value).children {
            guard let label = child.label else { continue }
            fields[label] = Mirror(reflecting: child.value).displayStyle == .optional
        }
        return fields
    }

    /// The `$defs` entry `definition` (the top level for nil) lists exactly the fields of `value`
    /// and requires exactly the non-optional ones.
    static func expectExact(
        _ value: Any, in schema: [String: Any], _ definition: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try Schemas.expectNamed(value, in: schema, definition, sourceLocation: sourceLocation)
        let fields = Self.fields(value)
        let listed = try Schemas.properties(schema, definition)
        let entry = try definition.map { try BenchSchemaTests.definition(schema, $0) } ?? schema
        let required = Set(entry["required"] as? [String] ?? [])
        let place = definition.map { "$defs/\($0)" } ?? "the top level"
        #expect(
            listed.subtracting(fields.keys).isEmpty,
            "\(place) lists \(listed.subtracting(fields.keys).sorted()), which \(type(of: value)) does not have",
            sourceLocation: sourceLocation)
        let mandatory = Set(fields.filter { !$0.value }.keys)
        #expect(
            required == mandatory,
            "\(place) requires \(required.sorted()); \(type(of: value))'s non-optional fields are \(mandatory.sorted())",
            sourceLocation: sourceLocation)
    }

    @Test("every field of the calibration types is in calibration.schema.json, the non-optional ones required")
    func namesEveryField() throws {
        let schema = try Schemas.schema(.calibration)
        let calibration = try Self.fullCalibration()
        let stamp = try #require(calibration.model.calibration)
        try Self.expectExact(calibration, in: schema, nil)
        try Self.expectExact(calibration.host, in: schema, "Host")
        try Self.expectExact(calibration.model, in: schema, "LaunchCostModel")
        try Self.expectExact(stamp, in: schema, "Calibration")
        try Self.expectExact(calibration.points[0], in: schema, "Point")
        try Self.expectExact(calibration.points[0].work, in: schema, "LoaderWork")
        // Every time and unit cost says its unit in its name and in its description.
        var entries = try #require(schema["$defs"] as? [String: Any])
        entries["(top level)"] = schema
        for (owner, entry) in entries {
            for (name, property) in (entry as? [String: Any])?["properties"] as? [String: Any] ?? [:] {
                guard let unit = name.hasSuffix("Ns") ? "in ns" : name.hasSuffix("Ps") ? "in ps" : nil else { continue }
                let description = (property as? [String: Any])?["description"] as? String ?? ""
                #expect(description.contains(unit), "\(owner).\(name): \"\(description)\" does not say \(unit)")
            }
        }
        #expect(
            try BenchSchemaTests.property(schema, "schemaVersion")["const"] as? Int == HostCalibration.currentSchemaVersion,
            "schemaVersion's const is HostCalibration.currentSchemaVersion")
    }

    /// What `CalibrationStore.save` writes (the encoding `calibrate --json` prints too).
    static func storedText(_ calibration: HostCalibration) throws -> String {
        let directory = FixtureBuilder.outputRoot.appendingPathComponent("calibration-schema-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try CalibrationStore(directory: directory).save(calibration)
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test("the file CalibrationStore writes validates and loads back unchanged")
    func storedFileValidates() throws {
        let calibration = try Self.fullCalibration()
        let directory = FixtureBuilder.outputRoot.appendingPathComponent("calibration-schema-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = CalibrationStore(directory: directory)
        let path = try store.save(calibration)
        try SchemaValidator.expectValid(file: path, against: .calibration)
        #expect(try store.load(host: calibration.host) == calibration)
        // The model alone, as inspect reads it, is the same model, each term
        // a different value so a term it missed or swapped shows.
        let terms = LaunchCostModel.termNames.indices.map { 1_000 + $0 }
        var distinct = calibration
        distinct.model = calibration.model.with(coefficientsPs: terms, source: "distinct \u{e9}\"quoted\"", calibration: calibration.model.calibration)
        distinct.model.perInitializerPs = 999
        _ = try store.save(distinct)
        #expect(try store.loadModel(host: calibration.host) == distinct.model)
        distinct.model.calibration = nil
        _ = try store.save(distinct)
        #expect(try store.loadModel(host: calibration.host) == distinct.model)
        // A host whose name could not be read is written without one.
        var nameless = calibration
        nameless.host.name = nil
        try SchemaValidator.expectValid(file: try store.save(nameless), against: .calibration)
    }

    @Test("calibration.schema.json refuses a misspelt key, a wrong type and what calibrate cannot write")
    func rejects() throws {
        let calibration = try Self.fullCalibration()
        let good = try Self.storedText(calibration)
        #expect(try SchemaValidator.problems(Array(good.utf8), against: .calibration) == nil)
        let stamp = calibration.measuredAt
        for (from, to) in [
            // Misspelt keys: at the top, in a point, in its work, in the model and its stamp.
            ("\"rmsErrorPercent\" :", "\"rmsErrorPercnt\" :"), ("\"measuredNs\" :", "\"measuredNS\" :"),
            ("\"scopeSteps\" :", "\"scopeStep\" :"), ("\"perLookupPs\" :", "\"perLookupNs\" :"),
            ("\"worstErrorPercent\" :", "\"worstErrorPercents\" :"),
            // Wrong types.
            ("\"runsPerPoint\" : 7", "\"runsPerPoint\" : \"7\""), ("\"cores\" : 2", "\"cores\" : 2.5"),
            ("\"durationNs\" : 2500000000", "\"durationNs\" : 2500000000.5"), ("\"name\" : \"builder\"", "\"name\" : null"),
            // Another version, a local time, a point without runs.
            ("\"schemaVersion\" : 4", "\"schemaVersion\" : 3"),
            ("\"measuredAt\" : \"\(stamp)\"", "\"measuredAt\" : \"\(stamp.dropLast())+01:00\""), ("\"runs\" : 1", "\"runs\" : 0"),
        ] {
            let bad = good.replacingOccurrences(of: from, with: to)
            #expect(bad != good, "\(from) occurs in the stored file")
            #expect(try SchemaValidator.problems(Array(bad.utf8), against: .calibration) != nil, "\(to) is refused")
        }
        // A negative unit cost, and a model without its calibration stamp.
        var negative = calibration
        negative.model.perObjectPs = -1
        #expect(try SchemaValidator.problems(Array(Self.storedText(negative).utf8), against: .calibration) != nil)
        var unstamped = calibration
        unstamped.model.calibration = nil
        #expect(try SchemaValidator.problems(Array(Self.storedText(unstamped).utf8), against: .calibration) != nil)
    }
}
