import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// PhaseTimeline from scripted event lists: every expected figure is computed here from the
/// scripted times, never copied from the code's output.
@Suite("PhaseTimeline")
struct PhaseTimelineTests {
    /// An arbitrary absolute monotonic origin: the timeline must subtract it.
    static let t0: UInt64 = 7_000_000_123_456

    static func at(_ offsetNs: UInt64) -> UInt64 { t0 + offsetNs }

    static func hook(_ kind: HookEvent.Kind, _ name: String = "", _ offsetNs: UInt64) -> LaunchEvent {
        .hook(HookEvent(kind: kind, name: name, atNs: at(offsetNs)))
    }

    /// A dynamically linked app with two libraries, three app phases, two tasks.
    static let dynamicLaunch: [LaunchEvent] = [
        .spawned(atNs: at(0)),
        .imageStarted(image: 0, path: "/opt/app", atNs: at(300_000)),
        .relocationStarted(atNs: at(700_000)),
        .relocationFinished(atNs: at(900_000)),
        .objectInitStarted(path: "/lib/liba.so", atNs: at(950_000)),
        .objectInitStarted(path: "/lib/libb.so", atNs: at(2_950_000)),
        .entryReached(atNs: at(3_000_000)),
        .mainReached(atNs: at(3_400_000)),
        hook(.begin, "willFinishLaunching", 3_500_000),
        hook(.end, "willFinishLaunching", 5_500_000),
        hook(.begin, "restoreState", 5_600_000),
        hook(.extend, "warm-cache", 5_700_000),
        hook(.end, "restoreState", 8_600_000),
        hook(.begin, "didFinishLaunching", 8_700_000),
        hook(.extend, "sync inbox", 8_800_000),
        hook(.end, "didFinishLaunching", 9_700_000),
        hook(.firstFrame, "", 10_000_000),
        hook(.finishExtend, "warm-cache", 12_000_000),
        hook(.finishExtend, "sync inbox", 15_000_000),
        .exited(.exited(code: 0), atNs: at(16_000_000)),
    ]

    func phase(_ timeline: PhaseTimeline, _ name: String, object: String? = nil, task: String? = nil, image: Int? = nil)
        -> LaunchPhase?
    {
        timeline.phases.first {
            $0.name == name && (object == nil || $0.object == object) && (task == nil || $0.task == task)
                && $0.image == image
        }
    }

    @Test("a full dynamic launch: every phase from its boundaries, times from the spawn")
    func dynamicLaunchPhases() throws {
        let timeline = try PhaseTimeline(events: Self.dynamicLaunch)
        let expected: [(String, String?, String?, UInt64, UInt64)] = [
            ("exec", nil, nil, 0, 300_000),
            ("loader.map", nil, nil, 300_000, 700_000 - 300_000),
            ("loader.relocate", nil, nil, 700_000, 900_000 - 700_000),
            ("loader.init", "/lib/liba.so", nil, 950_000, 2_950_000 - 950_000),
            ("loader.init", "/lib/libb.so", nil, 2_950_000, 3_000_000 - 2_950_000),
            ("program.init", nil, nil, 3_000_000, 3_400_000 - 3_000_000),
            ("main", nil, nil, 3_400_000, 0),
            ("willFinishLaunching", nil, nil, 3_500_000, 2_000_000),
            ("restoreState", nil, nil, 5_600_000, 3_000_000),
            ("extendedLaunch", nil, "warm-cache", 5_700_000, 12_000_000 - 5_700_000),
            ("didFinishLaunching", nil, nil, 8_700_000, 1_000_000),
            ("extendedLaunch", nil, "sync inbox", 8_800_000, 15_000_000 - 8_800_000),
            ("firstFrame", nil, nil, 10_000_000, 0),
            ("exit", nil, nil, 16_000_000, 0),
        ]
        #expect(timeline.phases.count == expected.count)
        for (actual, wanted) in zip(timeline.phases, expected) {
            #expect(actual.name == wanted.0)
            #expect(actual.object == wanted.1)
            #expect(actual.task == wanted.2)
            #expect(actual.startNs == wanted.3, "\(actual.name) start")
            #expect(actual.durationNs == wanted.4, "\(actual.name) duration")
            #expect(actual.image == nil)
        }
        #expect(timeline.metrics.timeToMainNs == 3_400_000)
        #expect(timeline.metrics.timeToFirstFrameNs == 10_000_000)
        #expect(timeline.metrics.extendedLaunchNs == max(10_000_000, 12_000_000, 15_000_000))
        #expect(timeline.metrics.exitNs == 16_000_000)
        #expect(timeline.absent.isEmpty)
        #expect(timeline.warnings.isEmpty)
        #expect(timeline.exitStatus == .exited(code: 0))
        #expect(timeline.spawnedAtNs == Self.t0)
    }

    @Test("phases are sorted by start, and hooks sent out of order are put in order")
    func ordering() throws {
        var events = Self.dynamicLaunch
        // The tracer may receive a late datagram after the exit.
        let late = events.remove(at: 9)
        events.append(late)
        let timeline = try PhaseTimeline(events: events)
        #expect(zip(timeline.phases, timeline.phases.dropFirst()).allSatisfy { $0.startNs <= $1.startNs })
        #expect(phase(timeline, "willFinishLaunching")?.durationNs == 2_000_000)
    }

    @Test("a static program: the tracer's reasons become absent phases, nothing estimated")
    func staticProgram() throws {
        let reason = "statically linked: no dynamic loader"
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/bin/busybox", atNs: Self.at(200_000)),
            .unobservable(phase: "loader.map", reason: reason),
            .unobservable(phase: "loader.relocate", reason: reason),
            .unobservable(phase: "loader.init", reason: reason),
            .entryReached(atNs: Self.at(200_000)),
            .mainReached(atNs: Self.at(260_000)),
            .exited(.exited(code: 0), atNs: Self.at(400_000)),
        ])
        #expect(timeline.phases.map(\.name) == ["exec", "program.init", "main", "firstFrame", "exit"])
        #expect(Set(timeline.absent) == [
            AbsentPhase(phase: "loader.map", reason: reason),
            AbsentPhase(phase: "loader.relocate", reason: reason),
            AbsentPhase(phase: "loader.init", reason: reason),
        ])
        #expect(timeline.metrics.timeToMainNs == 260_000)
        // Exit readiness by default: the first frame is the exit.
        #expect(timeline.metrics.timeToFirstFrameNs == 400_000)
        #expect(timeline.metrics.extendedLaunchNs == 400_000)
    }

    @Test("with the program's first initializer observed, libc's start-up is program.start")
    func programStartSplit() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/opt/app", atNs: Self.at(100_000)),
            .relocationStarted(atNs: Self.at(200_000)),
            .relocationFinished(atNs: Self.at(300_000)),
            .objectInitStarted(path: "/lib/liba.so", atNs: Self.at(310_000)),
            .entryReached(atNs: Self.at(500_000)),
            .programInitStarted(atNs: Self.at(520_000)),
            .mainReached(atNs: Self.at(900_000)),
            .exited(.exited(code: 0), atNs: Self.at(1_000_000)),
        ])
        #expect(phase(timeline, "loader.init", object: "/lib/liba.so")?.durationNs == 500_000 - 310_000)
        #expect(phase(timeline, "program.start") == LaunchPhase(name: "program.start", startNs: 500_000, durationNs: 20_000))
        #expect(phase(timeline, "program.init") == LaunchPhase(name: "program.init", startNs: 520_000, durationNs: 380_000))
        #expect(timeline.absent.isEmpty)
    }

    @Test("an unobservable phase that was measured another way is not listed as absent")
    func unobservableButMeasured() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/bin/sh", atNs: Self.at(100_000)),
            .unobservable(phase: "firstFrame", reason: "no hooks in a shell"),
            .unobservable(phase: "main", reason: "stripped and static"),
            .exited(.exited(code: 0), atNs: Self.at(900_000)),
        ])
        #expect(timeline.metrics.timeToFirstFrameNs == 900_000)
        #expect(!timeline.absent.contains { $0.phase == "firstFrame" })
        #expect(timeline.absent.filter { $0.phase == "main" } == [AbsentPhase(phase: "main", reason: "stripped and static")])
    }

    @Test("a constructor that crashes: its init ends at the exit, main is absent with the signal")
    func crashInConstructor() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/opt/crash", atNs: Self.at(250_000)),
            .relocationStarted(atNs: Self.at(500_000)),
            .relocationFinished(atNs: Self.at(600_000)),
            .objectInitStarted(path: "/opt/libbad.so", atNs: Self.at(650_000)),
            .exited(.signaled(signal: 11, coreDumped: false), atNs: Self.at(1_650_000)),
        ])
        #expect(phase(timeline, "loader.init", object: "/opt/libbad.so")?.durationNs == 1_000_000)
        #expect(timeline.metrics.timeToMainNs == nil)
        #expect(timeline.metrics.exitNs == 1_650_000)
        let absent = Dictionary(uniqueKeysWithValues: timeline.absent.map { ($0.phase, $0.reason) })
        #expect(absent["main"]?.contains("signal 11") == true)
        #expect(absent["program.init"] != nil)
        #expect(absent["loader.map"] == nil)
        #expect(timeline.exitStatus == .signaled(signal: 11, coreDumped: false))
    }

    @Test("an exec chain: later images carry `image`, time to main is the last image's")
    func execChain() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/usr/bin/rustc-proxy", atNs: Self.at(300_000)),
            .relocationStarted(atNs: Self.at(600_000)),
            .relocationFinished(atNs: Self.at(800_000)),
            .entryReached(atNs: Self.at(900_000)),
            .mainReached(atNs: Self.at(1_000_000)),
            .imageStarted(image: 1, path: "/opt/rustc", atNs: Self.at(5_000_000)),
            .relocationStarted(atNs: Self.at(5_400_000)),
            .relocationFinished(atNs: Self.at(6_000_000)),
            .objectInitStarted(path: "/opt/librustc_driver.so", atNs: Self.at(6_100_000)),
            .entryReached(atNs: Self.at(7_100_000)),
            .mainReached(atNs: Self.at(7_300_000)),
            Self.hook(.firstFrame, "", 8_000_000),
            .exited(.exited(code: 0), atNs: Self.at(9_000_000)),
        ])
        #expect(phase(timeline, "main")?.startNs == 1_000_000)
        #expect(phase(timeline, "main", image: 1)?.startNs == 7_300_000)
        #expect(phase(timeline, "exec", image: 1) == LaunchPhase(name: "exec", startNs: 5_000_000, durationNs: 0, image: 1))
        #expect(phase(timeline, "loader.map", image: 1)?.durationNs == 400_000)
        #expect(phase(timeline, "loader.init", object: "/opt/librustc_driver.so", image: 1)?.durationNs == 1_000_000)
        #expect(phase(timeline, "firstFrame", image: 1)?.startNs == 8_000_000)
        #expect(phase(timeline, "exit", image: 1)?.startNs == 9_000_000)
        #expect(timeline.metrics.timeToMainNs == 7_300_000)
        #expect(timeline.absent.isEmpty)
    }

    @Test("an image that execs before main: main absent for that image only")
    func execBeforeMain() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/bin/wrapper", atNs: Self.at(100_000)),
            .relocationStarted(atNs: Self.at(150_000)),
            .relocationFinished(atNs: Self.at(160_000)),
            .objectInitStarted(path: "/lib/libexecs.so", atNs: Self.at(170_000)),
            .imageStarted(image: 1, path: "/bin/real", atNs: Self.at(400_000)),
            .relocationStarted(atNs: Self.at(450_000)),
            .relocationFinished(atNs: Self.at(460_000)),
            .entryReached(atNs: Self.at(470_000)),
            .mainReached(atNs: Self.at(480_000)),
            .exited(.exited(code: 0), atNs: Self.at(500_000)),
        ])
        #expect(phase(timeline, "loader.init", object: "/lib/libexecs.so")?.durationNs == 400_000 - 170_000)
        let absentMain = timeline.absent.filter { $0.phase == "main" }
        #expect(absentMain.count == 1)
        #expect(absentMain.first?.image == nil)
        #expect(absentMain.first?.reason.contains("exec'd image 1") == true)
        #expect(timeline.metrics.timeToMainNs == 480_000)
    }

    @Test("the first frame falls back to a ready event, then to the exit only when allowed")
    func firstFrameFallbacks() throws {
        let base: [LaunchEvent] = [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/srv/server", atNs: Self.at(100_000)),
        ]
        let ready = try PhaseTimeline(
            events: base + [
                .ready(reason: "listening on 127.0.0.1:8080", atNs: Self.at(2_000_000)),
                .exited(.killedByLaunchprof(signal: 15, reason: "ready"), atNs: Self.at(2_500_000)),
            ], readiness: .listen)
        #expect(ready.metrics.timeToFirstFrameNs == 2_000_000)
        // launchprof chose when it ended: no exit metric, but the exit is still on the timeline.
        #expect(ready.metrics.exitNs == nil)
        #expect(ready.phases.last?.name == "exit")
        #expect(RunOutcome(timeline: ready, timedOut: false).kind == .completed)
        // xterm answers launchprof's SIGTERM at readiness with exit(15): still a completed launch,
        // the status kept in the report beside who ended it.
        let answered = try PhaseTimeline(
            events: base + [
                .ready(reason: "listening on 127.0.0.1:8080", atNs: Self.at(2_000_000)),
                .exited(.exitedWhenEnded(code: 15, reason: "ready"), atNs: Self.at(2_500_000)),
            ], readiness: .listen)
        #expect(answered.metrics.timeToFirstFrameNs == 2_000_000)
        #expect(answered.metrics.exitNs == nil)
        #expect(RunOutcome(timeline: answered, timedOut: false).kind == .completed)
        #expect(RunExit(.exitedWhenEnded(code: 15, reason: "ready")) == RunExit(code: 15, killedBy: "ready"))

        let exited = base + [.exited(.exited(code: 0), atNs: Self.at(3_000_000))]
        #expect(try PhaseTimeline(events: exited, readiness: .exit).metrics.timeToFirstFrameNs == 3_000_000)
        #expect(try PhaseTimeline(events: exited).metrics.timeToFirstFrameNs == 3_000_000)
        for readiness: ReadinessPolicy in [.hook, .listen, try .stdout("up"), try .stderr("up")] {
            let timeline = try PhaseTimeline(events: exited, readiness: readiness)
            #expect(timeline.metrics.timeToFirstFrameNs == nil)
            #expect(timeline.metrics.extendedLaunchNs == nil)
            #expect(timeline.absent.contains { $0.phase == "firstFrame" })
        }
        // The app's hook always wins over readiness.
        let hooked = try PhaseTimeline(
            events: base + [
                Self.hook(.firstFrame, "", 1_000_000),
                .ready(reason: "line", atNs: Self.at(2_000_000)),
                .exited(.exited(code: 0), atNs: Self.at(3_000_000)),
            ], readiness: try .stdout("line"))
        #expect(hooked.metrics.timeToFirstFrameNs == 1_000_000)
    }

    /// A timeout, a crash or a failure status is not readiness: no first frame, no extended
    /// launch, the reason in `absent`, and an outcome naming what happened.
    @Test("only a clean exit stands in for the first frame", arguments: [
        (LaunchprofReport.ExitStatus.killedByLaunchprof(signal: 15, reason: "timeout after 1000 ms"), RunOutcome.Kind.completed, "ended by launchprof"),
        (LaunchprofReport.ExitStatus.signaled(signal: 11, coreDumped: false), RunOutcome.Kind.crashed, "signal 11 (SIGSEGV)"),
        (LaunchprofReport.ExitStatus.exited(code: 1), RunOutcome.Kind.exitedEarly, "exited with status 1"),
    ])
    func failedExitIsNoFirstFrame(status: LaunchprofReport.ExitStatus, kind: RunOutcome.Kind, reason: String) throws {
        let events: [LaunchEvent] = [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/opt/app", atNs: Self.at(100_000)),
            .mainReached(atNs: Self.at(400_000)),
            .exited(status, atNs: Self.at(1_000_000_000)),
        ]
        for readiness: ReadinessPolicy in [.automatic, .exit] {
            let timeline = try PhaseTimeline(events: events, readiness: readiness)
            #expect(timeline.metrics.timeToFirstFrameNs == nil)
            #expect(timeline.metrics.extendedLaunchNs == nil)
            #expect(timeline.metrics.timeToMainNs == 400_000, "what was observed stays")
            let absent = try #require(timeline.absent.first { $0.phase == "firstFrame" })
            #expect(absent.reason.contains(reason), "\(absent.reason)")
            // Ended by launchprof without a timeout flag is a completed launch (readiness reached).
            #expect(RunOutcome(timeline: timeline, timedOut: false).kind == kind)
            #expect(RunOutcome(timeline: timeline, timedOut: true).kind == .timedOut)
        }
    }

    @Test("an exit inside the loader is a failure to start; one after relocation is not")
    func exitInsideTheLoader() throws {
        let start: [LaunchEvent] = [.spawned(atNs: Self.at(0)), .imageStarted(image: 0, path: "/opt/app", atNs: Self.at(100_000))]
        let exit: LaunchEvent = .exited(.exited(code: 127), atNs: Self.at(900_000))
        let inLoader = try PhaseTimeline(events: start + [.relocationStarted(atNs: Self.at(200_000)), exit])
        #expect(inLoader.exitedInLoader)
        #expect(RunOutcome(timeline: inLoader, timedOut: false).kind == .failedToStart)
        let relocated = try PhaseTimeline(events: start + [
            .relocationStarted(atNs: Self.at(200_000)), .relocationFinished(atNs: Self.at(300_000)), exit,
        ])
        #expect(!relocated.exitedInLoader)
        #expect(RunOutcome(timeline: relocated, timedOut: false).kind == .exitedEarly)
        // A static program: the loader's phases are unobservable, so nothing says it was the loader.
        let noLoader = try PhaseTimeline(events: start + [.unobservable(phase: "loader.map", reason: "statically linked"), exit])
        #expect(!noLoader.exitedInLoader)
    }

    @Test("outcomes read as the summary prints them")
    func outcomeDescriptions() {
        #expect(RunOutcome(exit: RunExit(signal: 11, coreDumped: false), reachedReadiness: false, startedProgram: true).description == "crashed (SIGSEGV)")
        #expect(RunOutcome(exit: RunExit(code: 1), reachedReadiness: false, startedProgram: true).description == "exited with status 1 before readiness")
        #expect(RunOutcome(exit: RunExit(code: 3), reachedReadiness: true, startedProgram: true).description == "exited with status 3")
        #expect(RunOutcome(exit: RunExit(code: 0), reachedReadiness: false, startedProgram: true).description == "exited with status 0 before readiness")
        #expect(RunOutcome(exit: RunExit(code: 0), reachedReadiness: true, startedProgram: true) == .completed)
        #expect(RunOutcome(exit: RunExit(code: 127), reachedReadiness: false, startedProgram: false).kind == .failedToStart)
        #expect(RunOutcome.timedOut(after: 1_000_000_000, waitingFor: "the first-frame hook").description
            == "timed out after 1.00 s waiting for the first-frame hook")
        #expect(RunOutcome.signalName(6) == "SIGABRT")
        #expect(RunOutcome.signalName(35) == "SIGRTMIN+1")
        #expect(RunOutcome.signalName(99) == "signal 99")
    }

    @Test("MetricKit's rules and unpaired hooks are warnings, never errors")
    func ruleWarnings() throws {
        var events: [LaunchEvent] = [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/opt/app", atNs: Self.at(100_000)),
            Self.hook(.firstFrame, "", 1_000_000),
            Self.hook(.firstFrame, "", 1_100_000),
            Self.hook(.begin, "neverEnds", 1_200_000),
            Self.hook(.end, "neverBegan", 1_300_000),
            Self.hook(.finishExtend, "ghost", 1_400_000),
        ]
        let longID = String(repeating: "x", count: PhaseTimeline.maximumTaskIDLength + 1)
        let taskIDs = (0..<PhaseTimeline.maximumExtendedTasks).map { "task\($0)" } + [longID]
        for (offset, id) in taskIDs.enumerated() {
            let start = 2_000_000 + UInt64(offset) * 1_000
            events.append(Self.hook(.extend, id, start))
            events.append(Self.hook(.finishExtend, id, start + 500_000))
        }
        events.append(Self.hook(.extend, "open", 3_000_000))
        events.append(Self.hook(.extend, "open", 3_100_000))
        events.append(.exited(.exited(code: 0), atNs: Self.at(4_000_000)))
        let timeline = try PhaseTimeline(events: events)
        let codes = timeline.warnings.map(\.code)
        #expect(codes.filter { $0 == .tooManyExtendedTasks }.count == 1)
        #expect(codes.filter { $0 == .taskIDTooLong }.count == 1)
        #expect(codes.contains(.extendedTaskAfterFirstFrame))
        #expect(codes.filter { $0 == .duplicateFirstFrame }.count == 1)
        #expect(codes.contains(.beginWithoutEnd))
        #expect(codes.contains(.endWithoutBegin))
        #expect(codes.contains(.finishWithoutExtend))
        #expect(codes.contains(.duplicateExtendedTask))
        #expect(codes.contains(.extendedTaskNotFinished))
        // Every finished task is still measured; the unfinished one is absent, not estimated.
        #expect(timeline.phases.filter { $0.name == "extendedLaunch" }.count == taskIDs.count)
        #expect(timeline.metrics.timeToFirstFrameNs == 1_000_000)
        #expect(timeline.metrics.extendedLaunchNs == nil)
        #expect(timeline.absent.contains { $0.phase == "extendedLaunch" && $0.reason.contains("'open'") })
        #expect(timeline.absent.contains { $0.phase == "neverEnds" })
    }

    @Test("a task started before the first frame raises no warning")
    func taskBeforeFirstFrame() throws {
        let timeline = try PhaseTimeline(events: Self.dynamicLaunch)
        #expect(!timeline.warnings.contains { $0.code == .extendedTaskAfterFirstFrame })
    }

    @Test("hooks belong to the image running at their timestamp")
    func hookImageAssignment() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)),
            .imageStarted(image: 0, path: "/bin/a", atNs: Self.at(100)),
            .imageStarted(image: 1, path: "/bin/b", atNs: Self.at(10_000)),
            // Received after image 1 started, but stamped in image 0.
            Self.hook(.begin, "early", 1_000),
            Self.hook(.end, "early", 2_000),
            Self.hook(.begin, "late", 11_000),
            Self.hook(.end, "late", 12_000),
            .exited(.exited(code: 0), atNs: Self.at(20_000)),
        ])
        #expect(phase(timeline, "early")?.durationNs == 1_000)
        #expect(phase(timeline, "late", image: 1)?.durationNs == 1_000)
    }

    @Test("no spawn event is an error naming the count, not a crash")
    func missingSpawn() {
        #expect(throws: LaunchReportError.missingSpawn(eventCount: 1)) {
            try PhaseTimeline(events: [.mainReached(atNs: 5)])
        }
    }

    @Test("exec failure: no image at all gives absent exec and main")
    func execFailure() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(0)), .exited(.exited(code: 127), atNs: Self.at(90_000)),
        ])
        #expect(Set(timeline.absent.map(\.phase)).isSuperset(of: ["exec", "main"]))
        #expect(timeline.metrics.exitNs == 90_000)
        #expect(timeline.metrics.timeToMainNs == nil)
    }

    @Test("a span stamped against the clock is absent with a warning, an early event clamps to 0")
    func clockMismatch() throws {
        let timeline = try PhaseTimeline(events: [
            .spawned(atNs: Self.at(1_000)),
            .imageStarted(image: 0, path: "/bin/a", atNs: Self.at(2_000)),
            .relocationStarted(atNs: Self.at(5_000)),
            .relocationFinished(atNs: Self.at(4_000)),
            .hook(HookEvent(kind: .firstFrame, name: "", atNs: Self.at(500))),
            .exited(.exited(code: 0), atNs: Self.at(10_000)),
        ])
        #expect(timeline.metrics.timeToFirstFrameNs == 0)
        #expect(timeline.warnings.filter { $0.code == .timeOutOfOrder }.count == 2)
        #expect(phase(timeline, "loader.relocate") == nil)
        #expect(timeline.absent.contains { $0.phase == "loader.relocate" })
    }

    @Test("loader.init entries tile the time from the first initializer to the entry point")
    func initializersTile() throws {
        // Random boundaries, checked against the invariant rather than fixed numbers.
        var generator = SplitMix64(seed: 42)
        for _ in 0..<50 {
            var clock: UInt64 = 100
            func tick() -> UInt64 {
                clock += 1 + generator.next() % 1_000_000
                return Self.at(clock)
            }
            var events: [LaunchEvent] = [.spawned(atNs: Self.at(0))]
            events.append(.imageStarted(image: 0, path: "/a", atNs: tick()))
            events.append(.relocationStarted(atNs: tick()))
            events.append(.relocationFinished(atNs: tick()))
            let count = Int(generator.next() % 20)
            var firstInit: UInt64?
            for index in 0..<count {
                let time = tick()
                if firstInit == nil { firstInit = time }
                events.append(.objectInitStarted(path: "/lib\(index).so", atNs: time))
            }
            let entry = tick()
            events.append(.entryReached(atNs: entry))
            events.append(.mainReached(atNs: tick()))
            events.append(.exited(.exited(code: 0), atNs: tick()))
            let timeline = try PhaseTimeline(events: events)
            let inits = timeline.phases.filter { $0.name == "loader.init" }
            #expect(inits.count == count)
            #expect(inits.map(\.durationNs).reduce(0, +) == (firstInit.map { entry - $0 } ?? 0))
            #expect(zip(inits, inits.dropFirst()).allSatisfy { $0.endNs == $1.startNs })
        }
    }
}

/// A small deterministic generator, so a failing case can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Issue 32: nothing the child does after launchprof decided to end it is a metric — a first
/// frame the display server reports after the timeout, a hook, a boundary — while everything it
/// reached before stays in its timeline.
@Suite("PhaseTimeline: the end launchprof chose")
struct PhaseTimelineEndTests {
    static let t0: UInt64 = 9_000_000_000_000

    static func at(_ offsetNs: UInt64) -> UInt64 { t0 + offsetNs }

    /// A program spinning in main, ended by a 1 s timeout (SIGTERM at 1 s, its death at 1.001 s).
    static func timedOut(after late: [LaunchEvent] = []) -> [LaunchEvent] {
        [
            .spawned(atNs: at(0)),
            .imageStarted(image: 0, path: "/opt/spin", atNs: at(300_000)),
            .relocationStarted(atNs: at(500_000)),
            .objectInitStarted(path: "/lib/libc.so.6", atNs: at(700_000)),
            .programInitStarted(atNs: at(760_000)),
            .mainReached(atNs: at(800_000)),
            .hook(HookEvent(kind: .begin, name: "load", atNs: at(900_000))),
        ] + late + [
            .endedByLaunchprof(reason: "timeout after 1000 ms", atNs: at(1_000_000_000)),
            .exited(.killedByLaunchprof(signal: 15, reason: "timeout after 1000 ms"), atNs: at(1_001_000_000)),
        ]
    }

    @Test("every boundary before the end stays; the exit is not the program's")
    func boundariesBeforeTheEndStay() throws {
        let timeline = try PhaseTimeline(events: Self.timedOut(), readiness: .automatic)
        #expect(timeline.metrics.timeToMainNs == 800_000)
        #expect(timeline.phases.first { $0.name == "program.init" }?.durationNs == 40_000)
        #expect(timeline.phases.first { $0.name == "loader.map" }?.durationNs == 200_000)
        #expect(timeline.metrics.exitNs == nil, "launchprof chose when it ended")
        #expect(timeline.metrics.timeToFirstFrameNs == nil)
        let load = try #require(timeline.absent.first { $0.phase == "load" })
        #expect(load.reason == "it began at 900000 ns but never ended before launchprof ended the process (timeout after 1000 ms)")
        #expect(!timeline.warnings.contains { $0.code == .eventsAfterEnd })
    }

    @Test("a first frame, a hook or a boundary stamped after the end is left out, with a warning")
    func eventsAfterTheEndAreNoMetric() throws {
        let frame = LaunchEvent.display(DisplayEvent(kind: .firstFrame, atNs: Self.at(21_000_000_000), pid: 7, window: "0x1", display: ":9"))
        let events = EventMergeSorted.byTime(Self.timedOut() + [
            frame,
            .hook(HookEvent(kind: .end, name: "load", atNs: Self.at(1_000_500_000))),
            .hook(HookEvent(kind: .firstFrame, name: "", atNs: Self.at(1_000_600_000))),
            .ready(reason: "stdout matched: up", atNs: Self.at(1_000_700_000)),
        ])
        for readiness in [ReadinessPolicy.automatic, .frame, .hook] {
            let timeline = try PhaseTimeline(events: events, readiness: readiness)
            #expect(timeline.metrics.timeToFirstFrameNs == nil, "\(readiness)")
            #expect(!timeline.phases.contains { $0.name == "firstFrame" || $0.name == "load" })
            let warning = try #require(timeline.warnings.first { $0.code == .eventsAfterEnd })
            #expect(warning.message.hasPrefix("the hook 'end load' at 1000500000 ns and 3 later event(s) came after launchprof ended the process at 1000000000 ns (timeout after 1000 ms)"), "\(warning.message)")
            #expect(timeline.metrics.timeToMainNs == 800_000)
        }
    }

    @Test("a main reached only after the end is absent, not a metric")
    func mainAfterTheEndIsAbsent() throws {
        var events = Self.timedOut()
        events.removeAll { if case .mainReached = $0 { true } else { false } }
        events.insert(.mainReached(atNs: Self.at(1_000_200_000)), at: events.count - 1)
        let timeline = try PhaseTimeline(events: events, readiness: .automatic)
        #expect(timeline.metrics.timeToMainNs == nil)
        let main = try #require(timeline.absent.first { $0.phase == "main" })
        #expect(main.reason == "the process was ended by launchprof (timeout after 1000 ms) before main", "\(main.reason)")
    }
}

/// Puts scripted events in time order, the exit last (as `EventMerge` hands them to the timeline).
enum EventMergeSorted {
    static func byTime(_ events: [LaunchEvent]) -> [LaunchEvent] {
        let exit = events.filter { if case .exited = $0 { true } else { false } }
        return events.filter { if case .exited = $0 { false } else { true } }
            .enumerated().sorted { ($0.element.timeNs ?? 0, $0.offset) < ($1.element.timeNs ?? 0, $1.offset) }
            .map(\.element) + exit
    }
}
