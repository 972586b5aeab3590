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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // promtool reads all of its input before it writes: write, close, then read.
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self))
    }
}
