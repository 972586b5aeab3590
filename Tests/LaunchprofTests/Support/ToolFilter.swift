import Foundation

/// Runs a consumer tool (promtool, Python's parsers) on a text given on its standard input, as
/// a shell pipe does, and returns its exit status and what it printed.
enum ToolFilter {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ executable: String, _ arguments: [String], input: String) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // stderr drained on another thread, so a chatty tool cannot block on a full pipe.
        nonisolated(unsafe) var errors = Data()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errors = stderr.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }
        // The tools read all of their input before they write much: write, close, then read.
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let printed = stdout.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: printed, as: UTF8.self),
            stderr: String(decoding: errors, as: UTF8.self))
    }
}
