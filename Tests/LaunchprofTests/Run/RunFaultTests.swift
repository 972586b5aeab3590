import Foundation
import LaunchprofCore
import LaunchprofReport
import LaunchprofTracing
import Testing

/// Bad programs and interruptions: each gets a clear outcome, and afterwards no process the
/// launch created is left — running, stopped, traced or orphaned (the tests read /proc).
@Suite("run: faults", .serialized)
struct RunFaultTests {
    @Test func programNotFound() throws {
        #expect {
            _ = try RunHarness.run("launchprof-no-such-program-\(UUID().uuidString)")
        } throws: { error in
            guard case RunError.programNotFound = error else { return false }
            return "\(error)".contains("is not found in PATH")
        }
    }

    @Test func programNotExecutable() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lp-noexec-\(UUID().uuidString)").path
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try RunHarness.run(path)
        } throws: { error in
            guard case RunError.notExecutable(let subject, _) = error else { return false }
            return subject == path && "\(error)".contains("execute permission")
        }
        #expect {
            _ = try RunHarness.run(FileManager.default.temporaryDirectory.path)
        } throws: { error in "\(error)".contains("is a directory") }
    }

    /// Every descriptor a run opens (hook channel, output pipes, the monitor's wake-up pipe) is
    /// closed by its end: a leak would grow with the runs, reach every later child (which
    /// closes them all in its exec) and slow each launch a little more.
    @Test func runsLeaveNoDescriptorsOpen() throws {
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }
        let program = try RunFixtures.program("server")
        func run(_ runs: Int) throws -> RunHarness.Outcome {
            try RunHarness.run(program, runs: runs) {
                $0.readiness = try .stdout("listening")
                $0.lingerNs = 0
            }
        }
        // A first session may open lasting things: caches, the uprobes of the program's
        // boundaries (one set per launchprof process, kept until it exits).
        _ = try run(1)
        let before = openDescriptors()
        let outcome = try run(20)
        #expect(outcome.runs.count == 20)
        #expect(openDescriptors() == before)
    }

    @Test func crashInAConstructorIsReportedWithItsStack() throws {
        let program = try RunFixtures.program("crash")
        let marker = RunHarness.marker()
        let outcome = try RunHarness.run(program, environment: markerEnvironment(marker))
        let run = try #require(outcome.runs.first)
        #expect(run.exitStatus?.signal == SIGSEGV)
        #expect(run.failed)
        #expect(run.phase("main") == nil)
        let crash = try #require(run.warnings.first { $0.code == .crashed })
        #expect(crash.message.contains("run-crash+0x"), "the crashing frame is in the program: \(crash.message)")
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    @Test func programThatNeverBecomesReadyTimesOut() throws {
        let program = try RunFixtures.program("never-ready")
        let marker = RunHarness.marker()
        let outcome = try RunHarness.run(program, runs: 2, environment: markerEnvironment(marker)) {
            $0.readiness = .hook
            $0.timeoutNs = 300_000_000
            $0.terminationGraceNs = 200_000_000
        }
        #expect(outcome.runs.count == 2, "the remaining runs go on after a timeout")
        for run in outcome.runs {
            #expect(run.timedOut)
            #expect(run.failed)
            #expect(run.exitStatus?.killedBy?.contains("timeout") == true)
            #expect(run.phase("main") != nil, "the partial timeline is kept")
            #expect(run.phase("firstFrame") == nil)
        }
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    /// A timeout that passes before the child exists — a loaded machine still arming probes or
    /// forking — still ends it as soon as it is spawned (it used to be dropped, and the child
    /// ran on to its own end 30 s later with no `killedBy`).
    @Test func terminationRequestedBeforeTheSpawnEndsTheChild() throws {
        let program = try RunFixtures.program("never-ready")
        let marker = RunHarness.marker()
        let control = TraceControl()
        control.terminate(signal: SIGTERM, reason: "timeout after 1 ms")
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" } + [marker]
        let started = Date()
        let result = try LaunchTracer().trace(
            TraceRequest(executable: program, arguments: [program], environment: environment, plan: nil),
            planForImage: { _ in nil }, control: control)
        #expect(Date().timeIntervalSince(started) < 10, "ended at once, not by its own 30 s sleep")
        #expect(result.exitStatus == .killedByLaunchprof(signal: SIGTERM, reason: "timeout after 1 ms"))
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    @Test func programIgnoringSIGTERMIsKilled() throws {
        let program = try RunFixtures.program("ignore-term")
        let marker = RunHarness.marker()
        let outcome = try RunHarness.run(program, environment: markerEnvironment(marker)) {
            $0.readiness = .hook
            $0.timeoutNs = 200_000_000
            $0.terminationGraceNs = 200_000_000
        }
        let run = try #require(outcome.runs.first)
        #expect(run.exitStatus?.signal == SIGKILL)
        #expect(run.exitStatus?.killedBy != nil)
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    @Test func daemonForkedByTheChildIsKilled() throws {
        let program = try RunFixtures.program("daemon")
        let marker = RunHarness.marker()
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        var environment = markerEnvironment(marker)
        environment["LP_FIXTURE_TRUTH"] = truthPath
        environment["LP_DAEMON_US"] = "20000000"
        let outcome = try RunHarness.run(program, environment: environment)
        let run = try #require(outcome.runs.first)
        #expect(run.exitStatus == RunExit(code: 0))
        let warning = try #require(run.warnings.first { $0.code == .processesLeftBehind })
        let daemon = try #require(try FixtureTruth(contentsOf: truthPath).first("daemon"))
        #expect(warning.message.contains(daemon.name), "names the daemon's pid: \(warning.message)")
        // Killed: gone, or a zombie waiting for its new parent (init) to reap it.
        let state = RunHarness.state(of: Int32(daemon.name) ?? 0)
        #expect(state == nil || state == "Z", "the daemon is dead, not \(String(describing: state))")
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    @Test func serverIsReadyWhenItListens() throws {
        let program = try RunFixtures.program("server")
        let marker = RunHarness.marker()
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        var environment = markerEnvironment(marker)
        environment["LP_FIXTURE_TRUTH"] = truthPath
        environment["LP_SERVER_BUSY_US"] = "5000"
        let outcome = try RunHarness.run(program, environment: environment) {
            $0.readiness = .listen
            $0.lingerNs = 300_000_000  // time for the server to write its truth line
        }
        let run = try #require(outcome.runs.first)
        let main = try #require(run.phase("main"))
        let firstFrame = try #require(run.phase("firstFrame"))
        let truth = try FixtureTruth(contentsOf: truthPath)
        let listening = try #require(truth.first("listen"))
        let truthMain = try #require(truth.first("main"))
        RunHarness.expectClose(
            firstFrame.startNs - main.startNs, listening.beginNs - truthMain.beginNs, "main → listening")
        #expect(run.exitStatus?.killedBy != nil, "launchprof ended the server once ready")
        #expect(!run.failed)
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    /// Ctrl-C to the launchprof CLI in the middle of its first run: it exits 130, the child is
    /// gone, and the report is whole: that run, ended by the interruption, with what it reached
    /// (OutcomeTimelineTests checks the timeline itself).
    @Test func interruptMidRunLeavesNothingBehind() throws {
        let program = try RunFixtures.program("never-ready")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-interrupt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The fixture opens this FIFO for its truth at start: opening it here blocks until the
        // child is running under launchprof — a synchronisation without sleeping.
        let fifo = directory.appendingPathComponent("started").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let report = directory.appendingPathComponent("report.json").path
        let marker = RunHarness.marker()
        let launchprof = Process()
        launchprof.executableURL = try LaunchprofBinary.url()
        launchprof.arguments = [
            "run", "--runs", "5", "--timeout", "30", "--json", report, "--env", marker,
            "--env", "LP_FIXTURE_TRUTH=\(fifo)", program,
        ]
        try launchprof.run()
        let reader = FileHandle(forReadingAtPath: fifo)
        _ = reader?.availableData  // the child has written its first truth line
        launchprof.interrupt()
        launchprof.waitUntilExit()
        reader?.closeFile()
        #expect(launchprof.terminationStatus == 130)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        #expect(left.sorted() == ["report.json", "started"], "the report, no temporary file: \(left)")
        let runs = try ReportFiles.readReport(report).runs
        #expect(runs.map(\.outcome?.kind) == [.interrupted])
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    private func markerEnvironment(_ marker: String) -> [String: String] {
        let parts = marker.split(separator: "=", maxSplits: 1)
        return [String(parts[0]): String(parts[1])]
    }
}

/// The `launchprof` executable built beside the test bundle.
enum LaunchprofBinary {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func url() throws -> URL {
        var directory = Bundle.module.bundleURL.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("launchprof")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw Missing(description: "the launchprof executable is not built next to the tests (swift build first)")
    }
}
