import Foundation

/// Runs tools (cc, launchprof) with the caller's environment less any LD_PRELOAD, so the study
/// measures the programs, not a preload the shell happened to carry.
enum Shell {
    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["LD_PRELOAD", "LD_AUDIT", "LAUNCHPROF_HOOK_FD"] { environment[key] = nil }
        return environment
    }

    /// Runs `arguments[0]` (a path) and returns its combined output; a non-zero exit throws.
    @discardableResult
    static func run(_ arguments: [String], in directory: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ScalingError.commandFailed(
                command: arguments.prefix(6).joined(separator: " "), status: process.terminationStatus,
                output: output)
        }
        return output
    }
}
