import LaunchprofMonitor
import LaunchprofReport
import LaunchprofTracing
import Testing

/// The monitor's launch assembly on scripted kernel events: which processes are launches, how
/// each started, where it ends, and the run the report gets from it.
private let ms: UInt64 = 1_000_000

@Suite("Field launch assembly")
struct FieldLaunchAssemblerTests {
    static let app = "/opt/app/bin/app"
    static let clocks = FieldClocks(realtimeOffsetNs: 1_700_000_000_000_000_000, boottimeOffsetNs: 5_000)

    func assembler(timeoutNs: UInt64 = 60_000 * ms) -> FieldLaunchAssembler {
        FieldLaunchAssembler(fileNames: [["app"]], timeoutNs: timeoutNs)
    }

    /// A shell (pid 10) forks 100, which execs the app, runs the loader and reaches main.
    func coldStart(_ pid: Int32 = 100, at base: UInt64 = 1_000 * ms) -> [FieldEvent] {
        [
            .forked(parent: 10, child: pid, atNs: base),
            .execed(pid: pid, filename: Self.app, atNs: base + 1 * ms),
            .boundary(pid: pid, program: nil, boundaries: [.relocationStart], atNs: base + 2 * ms),
            .boundary(pid: pid, program: 0, boundaries: [.entry], atNs: base + 3 * ms),
            .boundary(pid: pid, program: 0, boundaries: [.programInit], atNs: base + 4 * ms),
            .boundary(pid: pid, program: 0, boundaries: [.main], atNs: base + 5 * ms),
        ]
    }

    func run(_ launch: FieldLaunchAssembler.Launch) throws -> LaunchRun {
        try launch.run(index: 0, unobservable: [], timeoutNs: 60_000 * ms, clocks: Self.clocks)
    }

    @Test("a cold launch from a shell: its fork is the spawn, hook phases, ended at its first frame")
    func coldLaunchWithHooks() throws {
        var assembler = assembler()
        let base = 1_000 * ms
        assembler.ingest(coldStart())
        assembler.ingest([
            .hook(pid: 100, HookEvent(kind: .begin, name: "willFinishLaunching", atNs: base + 6 * ms)),
            .hook(pid: 100, HookEvent(kind: .end, name: "willFinishLaunching", atNs: base + 9 * ms)),
        ])
        #expect(assembler.takeFinished().isEmpty)
        assembler.ingest(.hook(pid: 100, HookEvent(kind: .firstFrame, name: "", atNs: base + 12 * ms)))
        let launches = assembler.takeFinished()
        let launch = try #require(launches.first)
        #expect(launches.count == 1 && launch.startType == .cold && launch.pid == 100 && !launch.timedOut)
        let run = try run(launch)
        #expect(run.metrics.timeToMainNs == 5 * ms)
        #expect(run.metrics.timeToFirstFrameNs == 12 * ms)
        #expect(run.phases.map(\.name).contains("willFinishLaunching"))
        let exec = try #require(run.phases.first { $0.name == LaunchPhase.exec })
        #expect(exec.durationNs == 1 * ms)
        #expect(run.phases.first { $0.name == LaunchPhase.loaderMap }?.durationNs == 1 * ms)
        #expect(run.field == FieldLaunchFacts(startType: .cold, startedAt: "2023-11-14T22:13:21.000Z"))
        #expect(run.resolvedOutcome.kind == .completed)
        // Its process runs on: a later exit is no second launch.
        assembler.ingest(.exited(pid: 100, status: 0, atNs: base + 5_000 * ms))
        #expect(assembler.takeFinished().isEmpty && assembler.launchesInFlight == 0)
    }

    @Test("a command-line program: its exit is its first frame, with the exit status")
    func commandLineExit() throws {
        var assembler = assembler()
        assembler.ingest(coldStart())
        assembler.ingest(.exited(pid: 100, status: 3 << 8, atNs: 1_007 * ms))
        let run = try run(try #require(assembler.takeFinished().first))
        #expect(run.exitStatus?.code == 3)
        #expect(run.resolvedOutcome.kind == .exitedEarly)
        #expect(run.metrics.timeToMainNs == 5 * ms)
    }

    /// Its display first watched after its exec (before its entry, or after): a clean exit with no
    /// window seen is no first frame, absent with why; a window seen after all is one.
    @Test("a display not watched from the exec: a clean exit is no first frame; a window seen is", arguments: [false, true])
    func displayWatchedLate(beforeEntry: Bool) throws {
        let reason = "its display :5 was first watched during this launch: a window it showed before was not seen"
        var events = coldStart()
        events.append(.displayUnwatched(pid: 100, reason: reason, atNs: beforeEntry ? 1_001 * ms + 1 : 1_006 * ms))
        var assembler = assembler()
        assembler.ingest(events.sorted { $0.atNs < $1.atNs })
        assembler.ingest(.exited(pid: 100, status: 0, atNs: 1_030 * ms))
        let late = try run(try #require(assembler.takeFinished().first))
        #expect(late.metrics.timeToFirstFrameNs == nil)
        #expect(late.absent.contains(AbsentPhase(phase: LaunchPhase.firstFrame, reason: reason)), "\(late.absent)")
        #expect(late.resolvedOutcome.kind != .completed)

        var seen = self.assembler()
        seen.ingest(events.sorted { $0.atNs < $1.atNs })
        seen.ingest(.display(pid: 100, DisplayEvent(kind: .windowMapped, atNs: 1_020 * ms, pid: 100, window: "0x1", display: ":5")))
        seen.ingest(.display(pid: 100, DisplayEvent(kind: .firstFrame, atNs: 1_025 * ms, pid: 100, window: "0x1", display: ":5")))
        let shown = try run(try #require(seen.takeFinished().first))
        #expect(shown.metrics.timeToFirstFrameNs == 25 * ms)
        #expect(!shown.absent.contains { $0.phase == LaunchPhase.firstFrame })
    }

    @Test("other programs' launches are no launches, and leave nothing behind")
    func unwatched() {
        var assembler = assembler()
        for pid in Int32(200)..<Int32(300) {
            let at = UInt64(pid) * ms
            assembler.ingest([
                .forked(parent: 10, child: pid, atNs: at),
                .execed(pid: pid, filename: "/bin/true", atNs: at + 1),
                .boundary(pid: pid, program: nil, boundaries: [.relocationStart], atNs: at + 2),
                .exited(pid: pid, status: 0, atNs: at + 3),
            ])
        }
        #expect(assembler.takeFinished().isEmpty)
        #expect(assembler.counts == FieldLaunchAssembler.Counts())
    }

    @Test("a launch that fails in the loader (exit 127 before its code) is a failed cold launch")
    func loaderFailure() throws {
        var assembler = assembler()
        assembler.ingest([
            .forked(parent: 10, child: 100, atNs: 1_000 * ms),
            .execed(pid: 100, filename: "./bin/app", atNs: 1_001 * ms),
            .exited(pid: 100, status: 127 << 8, atNs: 1_002 * ms),
        ])
        let run = try run(try #require(assembler.takeFinished().first))
        #expect(run.resolvedOutcome.kind == .failedToStart)
        // An ordinary exit of an unwatched program of the same name is not one.
        assembler.ingest([
            .forked(parent: 10, child: 101, atNs: 1_010 * ms),
            .execed(pid: 101, filename: "/usr/games/app", atNs: 1_011 * ms),
            .exited(pid: 101, status: 0, atNs: 1_012 * ms),
        ])
        #expect(assembler.takeFinished().isEmpty)
    }

    @Test("a failure before the program's code under another absolute path is another program's, not a failed launch")
    func failureOfAnotherProgramOfTheSameName() throws {
        var assembler = FieldLaunchAssembler(fileNames: [["app"]], paths: [[Self.app]], timeoutNs: 60_000 * ms)
        assembler.ingest([
            .forked(parent: 10, child: 100, atNs: 1_000 * ms),
            .execed(pid: 100, filename: "/usr/games/app", atNs: 1_001 * ms),
            .exited(pid: 100, status: 9, atNs: 1_002 * ms),
            .forked(parent: 10, child: 101, atNs: 1_010 * ms),
            .execed(pid: 101, filename: Self.app, atNs: 1_011 * ms),
            .exited(pid: 101, status: 127 << 8, atNs: 1_012 * ms),
            .forked(parent: 10, child: 102, atNs: 1_020 * ms),
            .execed(pid: 102, filename: "./app", atNs: 1_021 * ms),
            .exited(pid: 102, status: 127 << 8, atNs: 1_022 * ms),
        ])
        // The killed /usr/games/app is not counted; the watched path and a relative name are.
        #expect(assembler.takeFinished().map(\.pid) == [101, 102])
    }

    @Test("forked from a running instance: a launch once it shows a frame, timed from the fork")
    func forkedFromInstance() throws {
        var assembler = assembler()
        assembler.running(pid: 100, program: 0)
        // A helper that does nothing visible is no launch.
        assembler.ingest([.forked(parent: 100, child: 150, atNs: 900 * ms), .exited(pid: 150, status: 0, atNs: 901 * ms)])
        assembler.ingest([
            .forked(parent: 100, child: 200, atNs: 1_000 * ms),
            .hook(pid: 200, HookEvent(kind: .begin, name: "didFinishLaunching", atNs: 1_001 * ms)),
            .hook(pid: 200, HookEvent(kind: .end, name: "didFinishLaunching", atNs: 1_004 * ms)),
            .hook(pid: 200, HookEvent(kind: .firstFrame, name: "", atNs: 1_006 * ms)),
        ])
        let launches = assembler.takeFinished()
        #expect(launches.count == 1)
        let launch = try #require(launches.first)
        #expect(launch.startType == .forked && launch.pid == 200)
        let run = try run(launch)
        #expect(run.metrics.timeToFirstFrameNs == 6 * ms)
        #expect(run.metrics.optimizedTimeToFirstFrameNs == 6 * ms)
        #expect(run.absent.contains { $0.phase == LaunchPhase.exec })
        #expect(!run.phases.contains { $0.name == LaunchPhase.exec })
    }

    @Test("stopped before its first frame and continued: resumed, its optimized time from the resume")
    func resumedFromFreeze() throws {
        var assembler = assembler(timeoutNs: 100 * ms)
        assembler.ingest(coldStart())
        assembler.ingest(.stopped(pid: 100, atNs: 1_006 * ms))
        // Frozen far past the timeout: not a timeout, the clock is stopped.
        assembler.expire(nowNs: 9_000 * ms)
        #expect(assembler.takeFinished().isEmpty)
        assembler.ingest([
            .continued(pid: 100, atNs: 10_000 * ms),
            .hook(pid: 100, HookEvent(kind: .firstFrame, name: "", atNs: 10_030 * ms)),
        ])
        let launch = try #require(assembler.takeFinished().first)
        #expect(launch.startType == .resumed)
        let run = try run(launch)
        #expect(run.metrics.optimizedTimeToFirstFrameNs == 30 * ms)
        #expect(run.field?.resumedAtNs == 9_000 * ms)
    }

    @Test("a stop sent before the exec tracepoint (the kernel's own order after a vfork) still freezes the launch")
    func stoppedBeforeExecTracepoint() throws {
        // posix_spawn's parent runs again once the child's exec has released its memory, before
        // the exec tracepoint: its SIGSTOP is stamped first (seen on one CPU, in one ring), and
        // delivered as the new image returns to user space.
        var assembler = assembler(timeoutNs: 100 * ms)
        var events = coldStart()
        events.insert(.stopped(pid: 100, atNs: 1_000 * ms + 500_000), at: 1)
        assembler.ingest(events)
        assembler.expire(nowNs: 9_000 * ms)
        #expect(assembler.takeFinished().isEmpty, "the frozen launch timed out")
        assembler.ingest([
            .continued(pid: 100, atNs: 10_000 * ms),
            .exited(pid: 100, status: 0, atNs: 10_010 * ms),
        ])
        let launch = try #require(assembler.takeFinished().first)
        #expect(launch.startType == .resumed && launch.resumedAtNs == 10_000 * ms && !launch.timedOut)
    }

    @Test("a second instance that hands over and exits is brought to front, not a cold launch")
    func broughtToFront() throws {
        var assembler = assembler()
        assembler.running(pid: 100, program: 0)
        assembler.ingest(coldStart(300, at: 2_000 * ms))
        assembler.ingest(.exited(pid: 300, status: 0, atNs: 2_040 * ms))
        let launch = try #require(assembler.takeFinished().first)
        #expect(launch.startType == .broughtToFront)
        #expect(try run(launch).metrics.resumeTimeNs == 40 * ms)
        // With no instance running, the same is a cold launch.
        assembler.ingest(.exited(pid: 100, status: 0, atNs: 2_100 * ms))
        assembler.ingest(coldStart(301, at: 3_000 * ms))
        assembler.ingest(.exited(pid: 301, status: 0, atNs: 3_040 * ms))
        #expect(assembler.takeFinished().first?.startType == .cold)
    }

    @Test("no first frame nor exit before the timeout: timed out, with no first frame")
    func timeout() throws {
        var assembler = assembler(timeoutNs: 100 * ms)
        assembler.ingest(coldStart())
        assembler.expire(nowNs: 1_099 * ms)
        #expect(assembler.takeFinished().isEmpty)
        assembler.expire(nowNs: 1_101 * ms)
        let launch = try #require(assembler.takeFinished().first)
        #expect(launch.timedOut)
        let run = try launch.run(index: 0, unobservable: [], timeoutNs: 100 * ms, clocks: Self.clocks)
        #expect(run.resolvedOutcome.kind == .timedOut && run.metrics.timeToFirstFrameNs == nil)
        #expect(run.metrics.timeToMainNs == 5 * ms)
    }

    @Test("an extended launch task holds the launch open past the first frame")
    func extendedLaunch() throws {
        var assembler = assembler()
        assembler.ingest(coldStart())
        assembler.ingest([
            .hook(pid: 100, HookEvent(kind: .extend, name: "sync", atNs: 1_006 * ms)),
            .hook(pid: 100, HookEvent(kind: .firstFrame, name: "", atNs: 1_008 * ms)),
        ])
        #expect(assembler.takeFinished().isEmpty)
        assembler.ingest(.hook(pid: 100, HookEvent(kind: .finishExtend, name: "sync", atNs: 1_020 * ms)))
        let run = try run(try #require(assembler.takeFinished().first))
        #expect(run.metrics.extendedLaunchNs == 20 * ms)
    }

    @Test("bounded: histories beyond the limit are evicted and counted, launches beyond it dropped")
    func bounded() {
        var assembler = FieldLaunchAssembler(fileNames: [["app"]], timeoutNs: 60_000 * ms, maximumProcesses: 32, maximumLaunches: 2)
        // Processes whose exit was never seen.
        for pid in Int32(1000)..<Int32(1100) {
            assembler.ingest(.forked(parent: 10, child: pid, atNs: UInt64(pid) * ms))
        }
        #expect(assembler.counts.evictedProcesses >= 68)
        for pid in Int32(2000)..<Int32(2003) { assembler.ingest(coldStart(pid, at: UInt64(pid) * ms)) }
        #expect(assembler.launchesInFlight == 2)
        #expect(assembler.counts.droppedLaunches == 1)
    }
}
