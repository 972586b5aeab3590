import CLaunchprof
import Foundation
import Synchronization
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

    // MARK: Seized, not stopped at the exec (the uprobe observer's default path)

    private static let seizeOptions = Int32(
        LP_PTRACE_O_EXITKILL | LP_PTRACE_O_TRACEEXEC | LP_PTRACE_O_TRACEFORK | LP_PTRACE_O_TRACEVFORK)

    /// What a seized launch went through, from the tracer's thread.
    private struct SeizedLaunch: Sendable {
        var attachment: String
        var child: Int32
        /// Times of the child's exec event stops.
        var execStopsNs: [UInt64] = []
        /// The processes traced besides the child, seen at the first stop or at the seize.
        var tracedDescendants: Set<Int32> = []
        var exitCode: Int32?
        var leftovers: [Int32] = []
    }

    /// Spawns `spawn` to be seized once vfork returns and runs it to its end, continuing every
    /// stop (as the tracer does: no signal for an event or a new process's first stop).
    private func runSeized(_ spawn: TracedProcesses.Spawn, afterSeize: @escaping @Sendable () -> Void = {}) throws -> SeizedLaunch {
        nonisolated(unsafe) let spawn = spawn
        return try onTracerThread { () throws -> SeizedLaunch in
            var spawn = spawn
            spawn.seizeOptions = Self.seizeOptions
            var (processes, _) = try TracedProcesses.spawn(spawn)
            defer { processes.killAndReap() }
            var launch = SeizedLaunch(attachment: "\(processes.attachment)", child: processes.child)
            launch.tracedDescendants = processes.descendants
            afterSeize()
            if case .endedBeforeSeize(let exit) = processes.attachment {
                launch.exitCode = exit.kind == LP_WAIT_EXITED ? exit.value : nil
                return launch
            }
            while true {
                switch try processes.nextStop() {
                case .childEnded(let exit):
                    processes.ended(exit.pid)
                    launch.exitCode = exit.kind == LP_WAIT_EXITED ? exit.value : nil
                    launch.leftovers = processes.killAndReap()
                    return launch
                case .handled(let stop):
                    launch.tracedDescendants.formUnion(processes.descendants)
                    try? Ptrace.cont(stop.pid)
                case .stopped(let stop):
                    if stop.event == LP_PTRACE_EVENT_EXEC, stop.pid == processes.child { launch.execStopsNs.append(stop.at_ns) }
                    let signal = stop.event == 0 && !Ptrace.isGroupStop(stop.pid) ? stop.value : 0
                    try? Ptrace.cont(stop.pid, signal: signal)
                }
            }
        }
    }

    /// Killed and reaped by us: gone, or a zombie no longer traced (its real parent reaps it).
    private func expectGone(_ process: Int32, _ what: String) {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return }
        #expect(status.contains("State:\tZ"), "\(what): \(status)")
        #expect(status.contains("TracerPid:\t0\n"), "\(what): \(status)")
    }

    @Test("seized as vfork returns: one exec event stop before the program's first code, its early fork traced")
    func seizedInsideTheExec() throws {
        let program = try RunFixtures.program("fork-early")
        var inExec = 0
        for _ in 0..<5 {
            let truthPath = FixtureTruth.temporaryPath()
            defer { try? FileManager.default.removeItem(atPath: truthPath) }
            let launch = try runSeized(.init(
                executable: program, arguments: [program], environment: ["LP_FIXTURE_TRUTH=\(truthPath)"]))
            let truth = try FixtureTruth(contentsOf: truthPath)
            let constructor = try #require(truth.first("ctor"))
            let forked = try #require(truth.first("daemon").flatMap { Int32($0.name) })
            #expect(launch.exitCode == 0)
            // The fork was traced (a fork event), so it was killed when the child ended.
            #expect(launch.tracedDescendants.contains(forked) && launch.leftovers.contains(forked), "\(launch)")
            expectGone(forked, "the fork")
            if launch.attachment == "seizedInExec" {
                inExec += 1
                #expect(launch.execStopsNs.count == 1, "\(launch)")
                #expect(launch.execStopsNs.allSatisfy { $0 < constructor.beginNs }, "the stop ends the exec, before any code of the program")
            } else {
                #expect(launch.attachment.hasPrefix("seizedLate"), "\(launch)")
            }
        }
        // The tracer is quicker than the rest of the exec (mapping the program and ld.so, the stack).
        #expect(inExec >= 1, "no seize of 5 landed inside the exec")
    }

    @Test("seized after the child forked: the fork is found and seized, killed and reaped at the end")
    func seizedLateFindsEarlierForks() throws {
        let program = try RunFixtures.program("fork-early")
        var output: [Int32] = [-1, -1]
        var input: [Int32] = [-1, -1]
        try #require(lp_pipe(&output, false) == 0 && lp_pipe(&input, false) == 0)
        defer { for fd in output + input where fd >= 0 { close(fd) } }
        var spawn = TracedProcesses.Spawn(executable: program, arguments: [program], environment: ["LP_HOLD=1"])
        spawn.standardOutput = output[1]
        spawn.standardInput = input[0]
        // Hold the seize back until the child has run its constructor's fork.
        let reader = output[0]
        let forkedLine = Mutex("")
        spawn.beforeSeize = { _ in
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(reader, &byte, 1) == 1, byte != 10 { bytes.append(byte) }
            forkedLine.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
        }
        let writer = input[1]
        let launch = try runSeized(spawn, afterSeize: { close(writer) })
        input[1] = -1
        let forked = try #require(Int32(forkedLine.withLock { $0 }.split(separator: " ").last ?? ""), "\(forkedLine.withLock { $0 })")
        #expect(launch.attachment.hasPrefix("seizedLate"), "\(launch)")
        #expect(launch.tracedDescendants.contains(forked), "the fork made before the seize is traced: \(launch)")
        #expect(launch.execStopsNs.isEmpty)
        #expect(launch.exitCode == 0)
        #expect(launch.leftovers.contains(forked), "\(launch)")
        expectGone(forked, "the fork")
    }

    @Test("a child that ended before the seize: its exit is reported, what it forked is killed")
    func endedBeforeTheSeize() throws {
        let program = try RunFixtures.program("fork-early")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        var spawn = TracedProcesses.Spawn(
            executable: program, arguments: [program], environment: ["LP_FIXTURE_TRUTH=\(truthPath)"])
        // Hold the seize back until the child has exited (not reaped: WNOWAIT).
        spawn.beforeSeize = { pid in
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        }
        let launch = try runSeized(spawn)
        #expect(launch.attachment.hasPrefix("endedBeforeSeize"), "\(launch)")
        #expect(launch.exitCode == 0)
        let truth = try FixtureTruth(contentsOf: truthPath)
        let forked = try #require(truth.first("daemon").flatMap { Int32($0.name) })
        // Killed through the child's process group; its real parent (init) reaps it in its own time.
        var gone = false
        var fd: Int32 = -1
        if lp_pidfd_open(forked, &fd) != 0 {
            gone = true
        } else {
            defer { close(fd) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            gone = poll(&poller, 1, 5000) == 1
        }
        #expect(gone, "the fork \(forked) outlived the launch")
    }
}
