import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM or SIGKILL to launchprof while processes are frozen (a held prewarm, a pool)
/// leaves nothing behind: checked in the process table. launchprof's stderr says when they are
/// frozen, so the test waits on that, not on a poll.
@Suite("prewarm: signals leave nothing behind", .serialized)
struct PrewarmSignalTests {
    @Test(arguments: [(SIGINT, 0), (SIGTERM, 0), (SIGKILL, 0), (SIGINT, 2), (SIGTERM, 2), (SIGKILL, 2)])
    func noFrozenStoppedOrTracedProcessSurvives(signal: Int32, pool: Int) throws {
        let program = try PrewarmHarness.app()
        let marker = RunHarness.marker()
        let process = Process()
        process.executableURL = try LaunchprofBinary.url()
        process.arguments = ["prewarm", "--hold", "30s", "--no-hazard-scan", "--env", marker, "--runs", "1"]
            + (pool > 0 ? ["--pool", "\(pool)"] : []) + [program]
        process.standardOutput = FileHandle.nullDevice
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        // launchprof says when its processes are frozen (a held process, or the pool once full):
        // read (bounded) until it has; then they are in the process table as traced-stopped.
        let said = pool > 0 ? "pool ready: \(pool) process(es) frozen at main" : "frozen at main, held "
        let text = Self.read(stderr.fileHandleForReading.fileDescriptor, until: said, timeoutMs: 20_000)
        #expect(text.contains(said), "launchprof said: \(text)")
        let frozen = RunHarness.processes(withMarker: marker).filter { RunHarness.state(of: $0) == "t" }
        #expect(frozen.count == max(pool, 1), "frozen: \(frozen)")
        // Watched before the signal: after it they are launchprof's orphans, reaped by init.
        let watchers = RunHarness.exitWatchers(RunHarness.processes(withMarker: marker))
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        // SIGKILL: the kernel ends the tracees (PTRACE_O_EXITKILL) as the tracer exits; wait
        // (bounded) for them to end before looking.
        RunHarness.awaitExit(watchers, timeoutMs: 5_000)
        let left = RunHarness.processes(withMarker: marker).filter { RunHarness.state(of: $0) != "Z" }
        #expect(left.isEmpty, "left behind: \(left.map { "\($0) \(RunHarness.state(of: $0).map(String.init) ?? "?")" })")
        if signal != SIGKILL { #expect(process.terminationStatus == 130) }
    }

    /// What arrives on `fd` until it contains `text`, the writer closes it, or `timeoutMs` passes.
    static func read(_ fd: Int32, until text: String, timeoutMs: Int) -> String {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: bytes, as: UTF8.self).contains(text) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000) + 1) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
