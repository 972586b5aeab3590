import Foundation

/// `launchprof monitor` running for a test: started with its stderr on a pipe, ready once it says
/// it records (its probes and events are open by then), stopped by a signal and waited for.
final class MonitorProcess: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process = Process()
    let store: String
    private let errors = Pipe()
    private let lock = NSLock()
    private var said = ""
    private let readyLine = DispatchSemaphore(value: 0)

    /// Starts the monitor on `store` with `arguments` (after `--store STORE`) and waits for it to
    /// record (or to exit, which is an error with what it said).
    init(store: String, _ arguments: [String]) throws {
        self.store = store
        process.executableURL = try LaunchprofBinary.url()
        process.arguments = ["monitor", "--store", store] + arguments
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let handle = errors.fileHandleForReading
        let ready = readyLine
        try process.run()
        DispatchQueue.global().async { [weak self] in
            while true {
                let data = handle.availableData
                guard !data.isEmpty else {
                    ready.signal()
                    return
                }
                guard let self else { return }
                self.lock.lock()
                self.said += String(decoding: data, as: UTF8.self)
                let recording = self.said.contains("recording into")
                self.lock.unlock()
                if recording { ready.signal() }
            }
        }
        ready.wait()
        guard process.isRunning, stderr.contains("recording into") else {
            process.waitUntilExit()
            throw Failure(description: "launchprof monitor exited \(process.terminationStatus) before recording: \(stderr)")
        }
    }

    /// Everything it wrote to stderr so far.
    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return said
    }

    /// The `/metrics` address it announced.
    var metricsPort: UInt16? {
        guard let range = stderr.range(of: #"http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression) else { return nil }
        return UInt16(stderr[range].dropFirst("http://127.0.0.1:".count).dropLast())
    }

    /// Sends `signal` and waits for it to exit; its exit status.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// A fresh directory for a store (the monitor makes the store inside it).
    static func scratch(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A shell script run to its end: how the tests launch programs "from a plain shell".
    static func shell(_ script: String, environment: [String: String] = [:]) throws {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        shell.environment = merged
        shell.standardOutput = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        guard shell.terminationStatus == 0 else { throw Failure(description: "the shell exited \(shell.terminationStatus): \(script)") }
    }
}
