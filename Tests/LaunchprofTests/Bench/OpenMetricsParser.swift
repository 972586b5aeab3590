import Foundation
import Testing

/// The Prometheus project's own OpenMetrics parser (prometheus_client, Debian's
/// python3-prometheus-client, installed by Scripts/setup.sh), run on a text: it throws on
/// anything the format does not allow, else prints each sample as `name labels value`.
enum OpenMetricsParser {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let script = """
        import json, sys
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
        for family in text_string_to_metric_families(sys.stdin.read()):
            for sample in family.samples:
                print(json.dumps({"family": family.name, "type": family.type, "unit": family.unit,
                                  "name": sample.name, "labels": sample.labels, "value": sample.value}, sort_keys=True))
        """

    /// The samples the parser read, or a failure with its message.
    static func parse(_ text: String) throws -> [[String: Any]] {
        let process = Process()
        // Debian's python3, where apt puts the module (not a pyenv shim earlier in PATH).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "the OpenMetrics parser refused the text (python3-prometheus-client missing? run Scripts/setup.sh):\n"
                + String(decoding: stderr, as: UTF8.self))
        }
        return try String(decoding: stdout, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }
}
