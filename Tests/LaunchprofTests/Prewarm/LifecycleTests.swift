import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// `launchprof run --resume-cycles K`: background and back K times through the lifecycle
/// signals, each resume timed to the app's didBecomeActive; the C header and the Swift entry point.
@Suite("lifecycle: resume cycles", .serialized)
struct LifecycleTests {
    /// With a writable cgroup v2 hierarchy the app is also suspended (frozen) in the background.
    static var freezerAvailable: Bool {
        ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].contains {
            access($0 + "/cgroup.procs", W_OK) == 0 && access($0 + "/cgroup.controllers", R_OK) == 0
        }
    }

    static var expectedStates: [LifecycleState.State] {
        let cycle: [LifecycleState.State] = freezerAvailable ? [.background, .suspended, .inactive, .active] : [.background, .inactive, .active]
        return [.notRunning, .inactive, .active] + cycle + cycle + [.terminated]
    }

    @Test func cHeaderAppResumesAndIsTimed() throws {
        let truthPath = PrewarmHarness.truthFile()
        defer { unlink(truthPath) }
        let outcome = try RunHarness.run(
            try PrewarmHarness.app(), runs: 2,
            environment: ["PW_LIFECYCLE": "1", "PW_INIT_US": "1000", "PW_POST_US": "1000", "LP_FIXTURE_TRUTH": truthPath]
        ) { $0.resumeCycles = 2 }
        let truth = try PrewarmHarness.truth(truthPath)
        // Each event reached the app's callback, in order, twice per run; willTerminate at the end.
        #expect(truth["lifecycle didBecomeActive"]?.count == 4)
        #expect(truth["lifecycle didEnterBackground"]?.count == 4)
        #expect(truth["lifecycle willTerminate"]?.count == 2)
        for run in outcome.runs {
            #expect(run.states?.map(\.state) == Self.expectedStates, "\(run.states ?? [])")
            let resume = try #require(run.metrics.resumeTimeNs)
            #expect(resume < 100_000_000, "resume \(resume) ns")
            #expect(run.phases.filter { $0.name == "didBecomeActive" }.count == 2)
            // States are in time order.
            let times = run.states?.map(\.atNs) ?? []
            #expect(times == times.sorted())
        }
        #expect(outcome.summary.resumeTimeNs?.count == 2)
    }

    /// A program with no lifecycle handling is not sent the signals that would kill it: the run
    /// says why no cycle ran, and launchprof ends the app as after any complete launch.
    @Test func programWithoutLifecycleHandlingIsToldNotKilled() throws {
        let json = NSTemporaryDirectory() + "lifecycle-none-\(UUID().uuidString).json"
        defer { unlink(json) }
        let outcome = try LaunchprofCLI.run([
            "run", "-r", "2", "--resume-cycles", "2", "--env", "LP_LINGER_US=5000000", "--json", json, try RunFixtures.app(),
        ])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("2 of 2 runs were not resume-cycled: the program has no lifecycle handling: it does not catch SIGUSR1 and SIGUSR2"), "\(outcome.stdout)")
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let report = try ReportFiles.readReport(json)
        for run in report.runs {
            #expect(run.outcome?.kind == .noLifecycleHandling)
            #expect(run.exitStatus?.signal == SIGTERM && run.exitStatus?.killedBy == "launch complete",
                    "ended by launchprof, not by SIGUSR1: \(String(describing: run.exitStatus))")
            #expect(run.metrics.timeToFirstFrameNs != nil, "the launch itself completed")
            #expect(run.metrics.resumeTimeNs == nil)
        }
    }

    /// A program that catches the signals but never reports the state: the timeout names it.
    @Test func stateNeverReachedIsNamedInTheTimeout() throws {
        let outcome = try LaunchprofCLI.run([
            "run", "-r", "1", "--resume-cycles", "2", "--timeout", "1", "--ready", "stdout:ready",
            "/bin/sh", "-c", "trap : USR1 USR2; echo ready; while :; do sleep 0.05; done",
        ])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stdout.contains(
            "1 of 1 runs timed out after 1.00 s waiting for the app to report didEnterBackground after SIGUSR1 (resume cycle 1 of 2)"),
            "\(outcome.stdout)")
    }

    /// A launchprof killed (SIGKILL) mid-cycle cannot remove its cgroup; the next launchprof
    /// removes it (its owner's pid is in its name and no longer a launchprof), and nothing is
    /// left frozen. Synchronised on the app's own lifecycle lines through a FIFO, no sleeping.
    @Test(.enabled(if: freezerAvailable)) func cgroupOfAKilledLaunchprofIsRemovedByTheNext() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-cgroup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("truth").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Read and write: reads block for the app's next line instead of seeing end-of-file
        // between its writes (it opens the FIFO for each line).
        let reader = open(fifo, O_RDWR | O_CLOEXEC)
        try #require(reader >= 0)
        defer { close(reader) }
        let marker = RunHarness.marker()
        let launchprof = Process()
        launchprof.executableURL = try LaunchprofBinary.url()
        launchprof.arguments = [
            "run", "-r", "1", "--resume-cycles", "1000", "--timeout", "60", "--env", marker, "--env", "PW_LIFECYCLE=1",
            "--env", "PW_POST_US=1000", "--env", "LP_FIXTURE_TRUTH=\(fifo)", try PrewarmHarness.app(),
        ]
        launchprof.standardOutput = FileHandle.nullDevice
        launchprof.standardError = FileHandle.nullDevice
        try launchprof.run()
        // The first didBecomeActive follows the first suspend: the cgroup exists by then.
        var text = ""
        var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        while !text.contains("lifecycle didBecomeActive"), poll(&descriptor, 1, 30_000) > 0 {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(reader, &buffer, buffer.count)
            if count > 0 { text += String(decoding: buffer[..<count], as: UTF8.self) }
        }
        try #require(text.contains("lifecycle didBecomeActive"), "the app never resumed: \(text)")
        let app = RunHarness.exitWatchers(RunHarness.processes(withMarker: marker))
        kill(launchprof.processIdentifier, SIGKILL)
        launchprof.waitUntilExit()
        RunHarness.awaitExit(app, timeoutMs: 10_000)  // ptrace's exit-kill ends the app

        let root = try #require(["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].first {
            access($0 + "/cgroup.procs", W_OK) == 0 && access($0 + "/cgroup.controllers", R_OK) == 0
        })
        func left() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
                .filter { $0.hasPrefix("launchprof-\(launchprof.processIdentifier)-") }
        }
        #expect(left().count == 1, "the killed launchprof left its cgroup behind (what this test is about)")
        let next = try LaunchprofCLI.run(["run", "-r", "1", "/bin/true"])
        #expect(next.status == 0, "\(next.stderr)")
        #expect(left().isEmpty, "the next launchprof removed the stale cgroup")
        #expect(RunHarness.processes(withMarker: marker).isEmpty, "no process left, frozen or not")
    }

    @Test func swiftEntryPointFreezesBeforeWillFinishLaunching() throws {
        let demo = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo-swift").path
        let outcome = try PrewarmHarness.run(demo, runs: 3, environment: ["LAUNCHPROF_DEMO_INIT_US": "20000"]) {
            $0.freezeAt = .willFinishLaunching
            $0.hold = .fixed(ns: 100_000_000)
            $0.scanHazards = false
        }
        try #require(outcome.runs.count == 3)
        var savings: [Int64] = []
        for run in outcome.runs {
            let prewarm = try #require(run.prewarm)
            #expect(prewarm.freezeAt == "willFinishLaunching")
            // Frozen after main (the 20 ms constructor is in the prewarm part), before the first step.
            #expect(prewarm.prewarmNs >= 20_000_000)
            #expect(prewarm.prewarmNs > (run.metrics.timeToMainNs ?? .max))
            let willFinish = try #require(run.phase("willFinishLaunching"))
            #expect(willFinish.startNs >= prewarm.resumeAtNs, "willFinishLaunching began before the resume")
            let optimized = try #require(run.metrics.optimizedTimeToFirstFrameNs)
            #expect(optimized >= 12_000_000, "the demo's steps take 12 ms: \(optimized)")
            savings.append(try #require(prewarm.savingNs))
        }
        // The median pair: a single one can lose ~10 ms to another session's uprobe release
        // (it takes every process's memory-map lock; seen once in a full suite run).
        #expect(savings.sorted()[1] > 15_000_000, "savings \(savings)")
    }

    @Test func swiftDemoHearsEveryTransition() throws {
        let demo = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo-swift").path
        let outcome = try RunHarness.run(demo, runs: 1, environment: ["LAUNCHPROF_DEMO_INIT_US": "1000"]) {
            $0.resumeCycles = 2
        }
        let run = try #require(outcome.runs.first)
        #expect(run.states?.map(\.state) == Self.expectedStates, "\(run.states ?? [])")
        #expect(run.metrics.resumeTimeNs != nil)
        for name in ["willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"] {
            #expect(run.phases.filter { $0.name == name }.count == 2, "\(name)")
        }
    }
}
