#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a `LaunchReport` back: strict about the schema version (a report whose meaning may
/// have changed is refused, not misread), tolerant of keys it does not know (later launchprofs
/// add optional fields without bumping the version).
public enum LaunchReportDecoder {
    private struct VersionProbe: Decodable {
        var schemaVersion: Int?
    }

    /// Decodes `bytes`, read from `path` (named in errors).
    public static func decode(_ bytes: [UInt8], path: String) throws(LaunchReportError) -> LaunchReport {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let probe: VersionProbe
        do {
            probe = try decoder.decode(VersionProbe.self, from: data)
        } catch {
            throw .invalidReport(path: path, reason: "it is not a JSON object (\(Self.describe(error)))")
        }
        guard let version = probe.schemaVersion else {
            throw .invalidReport(path: path, reason: "it has no schemaVersion")
        }
        guard version == LaunchReport.currentSchemaVersion else {
            throw .unsupportedSchemaVersion(path: path, found: version, supported: LaunchReport.currentSchemaVersion)
        }
        do {
            return try decoder.decode(LaunchReport.self, from: data)
        } catch {
            throw .invalidReport(path: path, reason: Self.describe(error))
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
