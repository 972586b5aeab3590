#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a `LaunchReport` back: strict about the schema version (a report whose meaning may
/// have changed is refused, not misread), tolerant of keys it does not know (later launchprofs
/// add optional fields without bumping the version).
public enum LaunchReportDecoder {
    /// The top level's keys and schema version: enough to tell what kind of document it is.
    private struct Probe: Decodable {
        var keys: Set<String>
        var schemaVersion: Int?

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            keys = Set(container.allKeys.map(\.stringValue))
            schemaVersion = try? container.decodeIfPresent(Int.self, forKey: Key(stringValue: "schemaVersion"))
        }
    }

    /// The other documents launchprof (and its neighbours) write, told apart by their keys, so a
    /// wrong file is named for what it is.
    static func otherKind(_ keys: Set<String>) -> String? {
        if keys.isSuperset(of: ["target", "host", "mode", "summary"]) { return nil }
        let kinds: [(Set<String>, String)] = [
            (["objects", "totals", "program"], "an inspect report (`launchprof inspect --json`)"),
            (["suite", "entries", "settings"], "a bench folder's summary (suite.json); give the folder itself"),
            (["launches", "version"], "a bench suite (the input of `launchprof bench`)"),
            (["model", "points"], "a calibration (`launchprof calibrate --json`)"),
            (["entries", "verdict", "missing"], "a comparison (`launchprof compare --format json`)"),
            (["metaData"], "a MetricKit metric payload (metrics.json)"),
            (["timeStampBegin", "timeStampEnd"], "a MetricKit diagnostic payload (diagnostics.json)"),
            (["traceEvents"], "a Chrome trace (`--trace`)"),
        ]
        for (required, name) in kinds where keys.isSuperset(of: required) { return name }
        return nil
    }

    /// Decodes `bytes`, read from `path` (named in errors).
    public static func decode(_ bytes: [UInt8], path: String) throws(LaunchReportError) -> LaunchReport {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let probe: Probe
        do {
            probe = try decoder.decode(Probe.self, from: data)
        } catch {
            throw .invalidReport(path: path, reason: "it is not a JSON object (\(Self.describe(error)))")
        }
        if let kind = otherKind(probe.keys) { throw .wrongKind(path: path, kind: kind) }
        guard let version = probe.schemaVersion else {
            throw .invalidReport(path: path, reason: "it has no schemaVersion")
        }
        guard version == LaunchReport.currentSchemaVersion else {
            throw .unsupportedSchemaVersion(path: path, found: version, supported: LaunchReport.currentSchemaVersion)
        }
        let report: LaunchReport
        do {
            report = try decoder.decode(LaunchReport.self, from: data)
        } catch {
            throw .invalidReport(path: path, reason: Self.describe(error))
        }
        // Times and sizes are added and subtracted by every reader: a number no launch can have
        // would overflow there, so it is refused here, by name.
        // The walk that names the place is for a report that has such a number: decoding
        // every value of a sampled report's deep trees through Codable's errors costs seconds.
        if NumberRange.anyOutOfRange(bytes), let (place, value) = (try? decoder.decode(NumberRange.self, from: data))?.outOfRange {
            throw .invalidReport(
                path: path,
                reason: "\(value) at \(place) is out of range (at most \(NumberRange.limitText): 10^17 ns is over 3 years)")
        }
        return report
    }

    /// Walks any JSON value and keeps the first number whose magnitude is over `limit`.
    private struct NumberRange: Decodable {
        static let limit: Double = 1e17
        static let limitText = "100000000000000000"
        var outOfRange: (place: String, value: String)?

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int?
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) {
                stringValue = String(intValue)
                self.intValue = intValue
            }
        }

        /// Whether the JSON text holds a number (outside strings) whose magnitude is over the
        /// limit: one pass over the bytes.
        static func anyOutOfRange(_ bytes: [UInt8]) -> Bool {
            var index = 0
            var inString = false
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    let start = index - 1
                    while index < bytes.count, "0123456789.eE+-".utf8.contains(bytes[index]) { index += 1 }
                    let text = String(decoding: bytes[start..<index], as: UTF8.self)
                    if !((Double(text)?.magnitude ?? .infinity) <= limit) { return true }
                }
            }
            return false
        }

        init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                for key in object.allKeys {
                    if let found = try object.decode(NumberRange.self, forKey: key).outOfRange {
                        outOfRange = found
                        return
                    }
                }
                return
            }
            if var array = try? decoder.unkeyedContainer() {
                while !array.isAtEnd {
                    if let found = try array.decode(NumberRange.self).outOfRange {
                        outOfRange = found
                        return
                    }
                }
                return
            }
            let value = try decoder.singleValueContainer()
            // Only for a number out of range: building the path at every value costs its depth
            // each time, seconds for a sampled report's deep call stack trees.
            func place() -> String { decoder.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") }
            if let number = try? value.decode(UInt64.self) {
                if Double(number) > Self.limit { outOfRange = (place(), String(number)) }
            } else if let number = try? value.decode(Int64.self) {
                if Double(number.magnitude) > Self.limit { outOfRange = (place(), String(number)) }
            } else if let number = try? value.decode(Double.self), !(number.magnitude <= Self.limit) {
                outOfRange = (place(), String(number))
            }
        }
    }

    /// A decoding error as "missing key 'x' at summary.runs".
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "" : " at " + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)'\(at(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.debugDescription + at(context.codingPath)
        @unknown default: return String(describing: error)
        }
    }
}
