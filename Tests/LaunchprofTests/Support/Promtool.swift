import Foundation

/// Prometheus's own `promtool check metrics` (Debian's `prometheus` package, installed by
/// Scripts/setup.sh): it parses a text in the classic exposition format 0.0.4 as Prometheus,
/// the node_exporter textfile collector and the Pushgateway do, and lints it (help text, counter
/// names, units). Exit 0: clean; 1: unreadable; 3: lint problems.
enum Promtool {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static let path = "/usr/bin/promtool"

    /// promtool's exit status and what it printed, for `text` on its standard input.
    static func checkMetrics(_ text: String) throws -> (status: Int32, output: String) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Missing(description: "promtool is not installed: run Scripts/setup.sh (Debian package prometheus)")
        }
        let outcome = try ToolFilter.run(path, ["check", "metrics"], input: text)
        return (outcome.status, outcome.stdout + outcome.stderr)
    }
}
