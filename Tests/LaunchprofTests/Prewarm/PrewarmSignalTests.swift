import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM or SIGKILL to launchprof while processes are frozen (a held prewarm, a pool)
/// leaves nothing behind: checked in the process table.
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
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait (bounded) until the frozen processes exist: traced-stopped ('t') with the marker.
        // A poll of the process table, not a wait on a handle: they are launchprof's children,
        // not this test's, and their becoming frozen shows nowhere but in /proc.
        let wanted = max(pool, 1)
        let deadline = Date().addingTimeInterval(20)
        var frozen: [Int32] = []
        while Date() < deadline {
            frozen = RunHarness.processes(withMarker: marker).filter { RunHarness.state(of: $0) == "t" }
            if frozen.count >= wanted { break }
            usleep(20_000)
        }
        #expect(frozen.count >= wanted, "never saw \(wanted) frozen process(es)")
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
}
