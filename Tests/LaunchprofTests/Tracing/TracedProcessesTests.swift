import CLaunchprof
import Foundation
import LaunchprofSystem
import Testing
@testable import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// The one set of traced processes (the tracer's and the hazard scanner's), on real children.
@Suite("Traced processes", .serialized)
struct TracedProcessesTests {
    /// Runs `body` on a thread of its own, as the tracer does (ptrace has thread affinity).
    private func onTracerThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        lp_spawn_prepare()
        let thread = DedicatedThread { () -> Result<T, any Error> in Result { try body() } }
        return try thread.join().get()
    }

    @Test("a daemon the child forked is tracked, reported as left behind, killed and reaped")
    func daemonIsKilledAndReaped() throws {
        let daemon = try RunFixtures.program("daemon")
        let truth = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truth) }
        let (child, leftovers) = try onTracerThread { () throws -> (Int32, [Int32]) in
            let spawn = TracedProcesses.Spawn(
                executable: daemon, arguments: [daemon], environment: ["LP_FIXTURE_TRUTH=\(truth)"])
            var (processes, _) = try TracedProcesses.spawn(spawn)
            defer { processes.killAndReap() }
            guard let first = try Ptrace.wait(processes.child), first.kind == LP_WAIT_STOPPED else {
                throw TracerError.unexpectedStop(pid: processes.child, detail: "no exec stop")
            }
            try Ptrace.setOptions(processes.child, Int32(LP_PTRACE_O_EXITKILL | LP_PTRACE_O_TRACEFORK | LP_PTRACE_O_TRACEVFORK))
            var resume = (pid: processes.child, signal: Int32(0))
            // Until the child itself has exited: its daemon lives on (3 s), traced.
            while true {
                try? Ptrace.cont(resume.pid, signal: resume.signal)
                switch try processes.nextStop() {
                case .childEnded(let exit):
                    processes.ended(exit.pid)
                    return (processes.child, processes.killAndReap())
                case .handled(let stop):
                    resume = (stop.pid, 0)
                case .stopped(let stop):
                    let group = stop.event == 0 && Ptrace.isGroupStop(stop.pid)
                    resume = (stop.pid, stop.event == 0 && !group ? stop.value : 0)
                }
            }
        }
        let recorded = try FixtureTruth(contentsOf: truth)
        let daemonPid = try #require(recorded.first("daemon").flatMap { Int32($0.name) })
        // The daemon, and at most the fork between it and the child (its exit may not have
        // been waited for yet when the child's was); never the child itself.
        #expect(leftovers.contains(daemonPid) && leftovers.count <= 2 && !leftovers.contains(child), "\(leftovers)")
        for process in leftovers {
            // Killed and reaped by us: gone, or (its real parent is init, which reaps it in its
            // own time) a zombie no longer traced.
            if let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) {
                #expect(status.contains("State:\tZ"), "\(status)")
                #expect(status.contains("TracerPid:\t0\n"), "\(status)")
            }
        }
    }

    @Test("a program that cannot be executed is named with the exec's errno")
    func spawnFailure() throws {
        let missing = "/nonexistent/\(UUID().uuidString)"
        #expect(throws: TracerError.cannotExecute(path: missing, errno: ENOENT)) {
            try onTracerThread { () throws -> Int32 in
                try TracedProcesses.spawn(.init(executable: missing, arguments: [missing], environment: [])).processes.child
            }
        }
    }
}
