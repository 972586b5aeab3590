import Foundation
import Synchronization
import Testing

/// The JSON Schemas in `docs/formats/schema/`, one per document launchprof writes.
enum JSONSchemaName: String, CaseIterable {
    case launchReport = "launch-report"
    case inspectReport = "inspect-report"
    case metricKitMetrics = "metrickit-metrics"
    case metricKitDiagnostics = "metrickit-diagnostics"
    case trace
    case benchSuite = "bench-suite"
    case benchSummary = "bench-summary"
    case comparison
    case calibration
    case inspectDlopen = "inspect-dlopen"

    var fileName: String { rawValue + ".schema.json" }
}

/// Validates documents with a kept validator: Python's `jsonschema` (draft 2020-12) through
/// `Scripts/validate-json.py --serve`, one process for the whole test run. Every test that
/// writes JSON calls `expectValid`.
enum SchemaValidator {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    private final class Server: @unchecked Sendable {
        let process: Process
        let input: FileHandle
        let output: Int32
        var buffered: [UInt8] = []

        init(python: String) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            let script = FixtureBuilder.packageRoot.appendingPathComponent("Scripts/validate-json.py").path
            let schemas = FixtureBuilder.packageRoot.appendingPathComponent("docs/formats/schema").path
            process.arguments = [script, "--serve", schemas]
            let stdin = Pipe()
            let stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try process.run()
            input = stdin.fileHandleForWriting
            output = stdout.fileHandleForReading.fileDescriptor
        }

        /// Sends one document; returns the answer line, nil when the server is gone.
        func validate(_ bytes: [UInt8], schema: String) -> String? {
            let header = Array("\(schema) \(bytes.count)\n".utf8)
            do {
                try input.write(contentsOf: Data(header + bytes))
            } catch {
                return nil
            }
            while true {
                if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffered[..<newline], as: UTF8.self)
                    buffered.removeSubrange(...newline)
                    return line
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return nil }
                buffered += chunk[..<count]
            }
        }
    }

    private static let server = Mutex<Server?>(nil)

    /// A Python with `jsonschema`: Debian's (python3-jsonschema), else the first on PATH.
    private static func start() throws -> Server {
        var candidates = ["/usr/bin/python3"]
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(String(directory) + "/python3")
        }
        for python in candidates where FileManager.default.isExecutableFile(atPath: python) {
            guard let server = try? Server(python: python) else { continue }
            // A probe: a server whose Python lacks jsonschema has already exited.
            if server.validate(Array("{}".utf8), schema: JSONSchemaName.trace.fileName) != nil { return server }
        }
        throw Unavailable(
            description: "no python3 with the jsonschema package (draft 2020-12): run Scripts/setup.sh "
                + "(Debian: python3-jsonschema) or pip install jsonschema")
    }

    /// The validator's answer for `bytes`: nil when valid, else the reasons.
    static func problems(_ bytes: [UInt8], against schema: JSONSchemaName) throws -> String? {
        try server.withLock { server -> String? in
            if server == nil { server = try start() }
            guard let answer = server?.validate(bytes, schema: schema.fileName) else {
                server = nil
                throw Unavailable(description: "the schema validator (Scripts/validate-json.py) stopped answering")
            }
            return answer == "ok" ? nil : answer
        }
    }

    /// Records an issue unless `bytes` is valid against `schema`.
    static func expectValid(
        _ bytes: some Sequence<UInt8>, against schema: JSONSchemaName, _ what: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let problems = try problems(Array(bytes), against: schema)
        #expect(problems == nil, "\(what) against \(schema.fileName): \(problems ?? "")", sourceLocation: sourceLocation)
    }

    /// The same for a file on disk.
    static func expectValid(
        file path: String, against schema: JSONSchemaName, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try expectValid(Array(data), against: schema, path, sourceLocation: sourceLocation)
    }
}
