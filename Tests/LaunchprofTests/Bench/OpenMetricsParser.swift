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
        // Debian's python3, where apt puts the module (not a pyenv shim earlier in PATH).
        let outcome = try ToolFilter.run("/usr/bin/python3", ["-c", script], input: text)
        guard outcome.status == 0 else {
            throw Failure(description: "the OpenMetrics parser refused the text (python3-prometheus-client missing? run Scripts/setup.sh):\n"
                + outcome.stderr)
        }
        return try outcome.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }
}
