import Foundation

/// The built `launchprof` executable, run as a user runs it.
enum LaunchprofCLI {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// How long any one command of a test may run before it is killed.
    static let timeoutSeconds: Double = 600

    static func run(_ arguments: [String], environment: [String: String]? = nil, directory: String? = nil) throws -> Outcome {
        try run(executable: try LaunchprofBinary.url().path, arguments, environment: environment, directory: directory)
    }

    /// Another program (one that runs launchprof itself, such as `unshare`), run the same way.
    static func run(
        executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A launchprof that never ends would hang the suite: it is killed after the bound, and
        // the test fails on its status (SIGKILL) instead.
        let watchdog = process.killed(after: timeoutSeconds)
        defer { watchdog.cancel() }
        // Drain stderr on another thread so a chatty command cannot block on a full pipe.
        nonisolated(unsafe) var stderr = Data()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            stderr = err.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A tool's stdout (it must exit 0).
    static func capture(_ executable: String, _ arguments: [String]) throws -> String {
        let outcome = try run(executable: executable, arguments)
        guard outcome.status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(executable) exited \(outcome.status): \(outcome.stderr)"])
        }
        return outcome.stdout
    }

    /// A documentation file of the repository, by its path from the root (`docs/measuring.md`):
    /// the tests check that what a user reads is what launchprof does.
    static func document(_ path: String) throws -> String {
        try String(contentsOf: FixtureBuilder.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }
}

extension Process {
    /// SIGKILLs the process if it still runs `seconds` from now (cancel the item once it
    /// ended): a test's child is bounded, never waited on forever.
    func killed(after seconds: Double) -> DispatchWorkItem {
        let pid = processIdentifier
        let watchdog = DispatchWorkItem { [self] in if isRunning { kill(pid, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        return watchdog
    }

    /// Waits for the process to end, at most `seconds`; then SIGKILLs and reaps it. Whether it
    /// ended on its own.
    @discardableResult
    func waitUntilExit(within seconds: Double) -> Bool {
        nonisolated(unsafe) var endedOnItsOwn = true
        let watchdog = DispatchWorkItem { [self] in
            if isRunning {
                endedOnItsOwn = false
                kill(processIdentifier, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        waitUntilExit()
        watchdog.cancel()
        return endedOnItsOwn
    }
}
