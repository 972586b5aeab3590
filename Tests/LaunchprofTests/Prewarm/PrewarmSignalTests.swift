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
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        // SIGKILL: the kernel ends the tracees (PTRACE_O_EXITKILL) as the tracer exits; let
        // the reaping finish (bounded) before looking. Again no handle to wait on: they were
        // launchprof's children, reaped by init now.
        let gone = Date().addingTimeInterval(5)
        var left = RunHarness.processes(withMarker: marker)
        while !left.isEmpty, Date() < gone {
            usleep(10_000)
            left = RunHarness.processes(withMarker: marker).filter { RunHarness.state(of: $0) != "Z" }
        }
        #expect(left.isEmpty, "left behind: \(left.map { "\($0) \(RunHarness.state(of: $0).map(String.init) ?? "?")" })")
        if signal != SIGKILL { #expect(process.terminationStatus == 130) }
    }
}
