import LaunchprofReport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A bench suite file (JSON, `version: 1`): the launches `launchprof bench` makes and the limits
/// it holds them to. Unknown keys are errors, so a misspelt `treshold` cannot silently disable a
/// limit. README "Launch regressions in CI" documents every key.
public struct BenchSuite: Sendable, Equatable {
    public static let currentVersion = 1

    public var version: Int
    /// The suite file's path (relative programs and folders resolve against its folder).
    public var path: String
    public var launches: [Launch]
    public var settings: ComparisonSettings

    /// One launch: a program run `runs` times in one mode.
    public struct Launch: Sendable, Equatable {
        /// Names the report file (`<name>.json`) and the entry in comparisons.
        public var name: String
        public var program: String
        public var arguments: [String] = []
        public var environment: [String: String] = [:]
        public var cwd: String?
        public var ready: ReadinessPolicy = .automatic
        public var mode: BenchMode = .warm
        public var runs = 20
        public var warmup = 1
        public var timeoutNs: UInt64 = 10_000_000_000
        /// `mode: prewarm`: how long each prewarmed process is held frozen (`launchprof prewarm --hold`).
        public var hold: PrewarmHold = .fixed(ns: 500_000_000)
        public var thresholds: [String: ComparisonSettings.Threshold] = [:]
        /// This launch's minimum effect, over the suite's (a cold launch on a shared disk varies
        /// far more than a warm one).
        public var minEffectPercent: Double?
        public var minEffectNs: UInt64?
    }

    /// Parses a suite from `bytes` read from `path`.
    public static func parse(_ bytes: [UInt8], path: String) throws(BenchError) -> BenchSuite {
        let object: JSONValue
        do {
            object = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw .invalidSuite(path: path, location: "", reason: "it is not JSON (\(LaunchReportDecoder.describe(error)))")
        }
        var reader = SuiteReader(path: path)
        return try reader.suite(object)
    }
}

/// Walks the parsed JSON by hand: each key checked against the ones its object allows, each
/// value against its type, errors naming the place (`launches[1].thresholds`).
private struct SuiteReader {
    let path: String

    func fail(_ location: String, _ reason: String) -> BenchError {
        .invalidSuite(path: path, location: location, reason: reason)
    }

    func object(_ value: JSONValue?, at location: String, allowed: [String]) throws(BenchError) -> [String: JSONValue] {
        guard case .object(let dictionary)? = value else {
            throw fail(location, "expected an object, not \(value?.kind ?? "nothing")")
        }
        for key in dictionary.keys.sorted() where !allowed.contains(key) {
            throw fail(location, "unknown key '\(key)' (known: \(allowed.joined(separator: ", ")))")
        }
        return dictionary
    }

    func string(_ value: JSONValue?, at location: String) throws(BenchError) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else { throw fail(location, "expected a string, not \(value.kind)") }
        return text
    }

    func number(_ value: JSONValue?, at location: String) throws(BenchError) -> Double? {
        guard let value else { return nil }
        guard case .number(let number) = value else { throw fail(location, "expected a number, not \(value.kind)") }
        return number
    }

    func strings(_ value: JSONValue?, at location: String) throws(BenchError) -> [String]? {
        guard let value else { return nil }
        guard case .array(let items) = value else { throw fail(location, "expected a list of strings, not \(value.kind)") }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = try string(item, at: "\(location)[\(index)]") else { continue }
            result.append(text)
        }
        return result
    }

    func integer(_ value: JSONValue?, at location: String, minimum: Int) throws(BenchError) -> Int? {
        guard let number = try number(value, at: location) else { return nil }
        guard number.rounded() == number, number >= Double(minimum), number < 1e12 else {
            throw fail(location, "expected a whole number of at least \(minimum)")
        }
        return Int(number)
    }

    mutating func suite(_ value: JSONValue) throws(BenchError) -> BenchSuite {
        // `$schema` lets an editor find docs/formats/schema/bench-suite.schema.json; it is not read.
        let top = try object(value, at: "", allowed: ["$schema", "confidence", "launches", "minEffectNs", "minEffectPercent", "reference", "version"])
        guard let version = try integer(top["version"], at: "version", minimum: 0) else {
            throw fail("", "missing 'version' (this launchprof reads version \(BenchSuite.currentVersion))")
        }
        guard version == BenchSuite.currentVersion else {
            throw fail("version", "version \(version) is not known to this launchprof, which reads version \(BenchSuite.currentVersion)")
        }
        _ = try string(top["$schema"], at: "$schema")
        var settings = ComparisonSettings()
        if let confidence = try number(top["confidence"], at: "confidence") {
            guard confidence > 0.5, confidence < 1 else { throw fail("confidence", "expected a level between 0.5 and 1, e.g. 0.95") }
            settings.confidence = confidence
        }
        if let percent = try number(top["minEffectPercent"], at: "minEffectPercent") {
            guard percent >= 0 else { throw fail("minEffectPercent", "cannot be negative") }
            settings.minEffectPercent = percent
        }
        if let ns = try integer(top["minEffectNs"], at: "minEffectNs", minimum: 0) { settings.minEffectNs = UInt64(ns) }
        guard case .array(let list)? = top["launches"], !list.isEmpty else {
            throw fail("launches", "expected a non-empty list of launches")
        }
        var launches: [BenchSuite.Launch] = []
        for (index, item) in list.enumerated() {
            let launch = try self.launch(item, at: "launches[\(index)]")
            if launches.contains(where: { $0.name == launch.name }) {
                throw fail("launches[\(index)].name", "'\(launch.name)' names two launches")
            }
            launches.append(launch)
        }
        if let reference = try string(top["reference"], at: "reference") {
            guard launches.contains(where: { $0.name == reference }) else {
                throw fail("reference", "'\(reference)' is not the name of a launch of the suite")
            }
            settings.reference = reference
        }
        return BenchSuite(version: version, path: path, launches: launches, settings: settings)
    }

    func launch(_ value: JSONValue, at location: String) throws(BenchError) -> BenchSuite.Launch {
        let fields = try object(value, at: location, allowed: [
            "arguments", "cwd", "environment", "hold", "minEffectNs", "minEffectPercent", "mode", "name", "program",
            "ready", "runs", "thresholds", "timeout", "warmup",
        ])
        guard let name = try string(fields["name"], at: "\(location).name") else { throw fail(location, "missing 'name'") }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }),
            !name.hasPrefix("."), name != "suite"
        else {
            throw fail("\(location).name", "'\(name)' must be letters, digits, '-', '_' or '.' (it names a file), not 'suite'")
        }
        guard let program = try string(fields["program"], at: "\(location).program"), !program.isEmpty else {
            throw fail(location, "missing 'program'")
        }
        var launch = BenchSuite.Launch(name: name, program: program)
        launch.arguments = try strings(fields["arguments"], at: "\(location).arguments") ?? []
        if let environment = fields["environment"] {
            guard case .object(let map) = environment else {
                throw fail("\(location).environment", "expected an object of strings, not \(environment.kind)")
            }
            for (key, value) in map {
                launch.environment[key] = try string(value, at: "\(location).environment.\(key)")
            }
        }
        launch.cwd = try string(fields["cwd"], at: "\(location).cwd")
        if let ready = try string(fields["ready"], at: "\(location).ready") {
            do {
                launch.ready = try ReadinessPolicy(argument: ready)
            } catch {
                throw fail("\(location).ready", error.description)
            }
        }
        if let mode = try string(fields["mode"], at: "\(location).mode") {
            do throws(BenchError) {
                launch.mode = try BenchMode(suiteValue: mode)
            } catch {
                throw fail("\(location).mode", error.description)
            }
        }
        if let hold = try string(fields["hold"], at: "\(location).hold") {
            guard launch.mode == .prewarm else { throw fail("\(location).hold", "only a prewarm launch is held") }
            do throws(PrewarmArgumentError) {
                launch.hold = try PrewarmHold(argument: hold)
            } catch {
                throw fail("\(location).hold", error.description)
            }
        }
        if let runs = try integer(fields["runs"], at: "\(location).runs", minimum: 1) { launch.runs = runs }
        if let warmup = try integer(fields["warmup"], at: "\(location).warmup", minimum: 0) { launch.warmup = warmup }
        if let timeout = try number(fields["timeout"], at: "\(location).timeout") {
            guard timeout > 0, timeout < 86_400 else { throw fail("\(location).timeout", "expected seconds, more than 0") }
            launch.timeoutNs = UInt64(timeout * 1e9)
        }
        if let percent = try number(fields["minEffectPercent"], at: "\(location).minEffectPercent") {
            guard percent >= 0 else { throw fail("\(location).minEffectPercent", "cannot be negative") }
            launch.minEffectPercent = percent
        }
        launch.minEffectNs = try integer(fields["minEffectNs"], at: "\(location).minEffectNs", minimum: 0).map(UInt64.init)
        if let thresholds = fields["thresholds"] {
            guard case .object(let map) = thresholds else {
                throw fail("\(location).thresholds", "expected an object, not \(thresholds.kind)")
            }
            for key in map.keys.sorted() {
                let place = "\(location).thresholds.\(key)"
                let metrics = LaunchMetrics().named.map(\.name)
                guard metrics.contains(key) || key.hasPrefix("phase:") else {
                    throw fail(place, "'\(key)' is not a metric (\(metrics.joined(separator: ", "))) or a phase ('phase:NAME')")
                }
                let limit = try object(map[key], at: place, allowed: ["maxMedianNs", "maxRegressionPercent"])
                var threshold = ComparisonSettings.Threshold()
                threshold.maxMedianNs = try integer(limit["maxMedianNs"], at: "\(place).maxMedianNs", minimum: 0).map(UInt64.init)
                threshold.maxRegressionPercent = try number(limit["maxRegressionPercent"], at: "\(place).maxRegressionPercent")
                if let percent = threshold.maxRegressionPercent, percent < 0 {
                    throw fail("\(place).maxRegressionPercent", "cannot be negative")
                }
                launch.thresholds[key] = threshold
            }
        }
        return launch
    }
}
