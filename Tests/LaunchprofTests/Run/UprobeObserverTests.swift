import Foundation
import LaunchprofCore
import LaunchprofReport
import LaunchprofTracing
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `run --observer uprobe`: the boundaries before `main` seen by uprobe perf events, the child
/// never stopped at them. Needs root or CAP_PERFMON (the machines running this suite have it):
/// a test that cannot open a uprobe fails, it does not skip.
/// Serialized: spans are real time, and parallel tests on 2 cores would stretch them.
@Suite("run: the uprobe observer", .serialized)
struct UprobeObserverTests {
    // MARK: Choosing the observer

    @Test func autoPicksUprobesWherePermittedAndTheReportSaysSo() throws {
        let outcome = try RunHarness.run(try RunFixtures.app())
        let session = try RunSession(configuration: RunConfiguration(program: try RunFixtures.app(), arguments: []))
        #expect(outcome.runs.first?.phase("loader.init", object: "libc.so.6")?.observerNs != nil)
        #expect(session.mode.observer == "uprobe")
        #expect(session.mode.observerReason?.hasPrefix("auto: ") == true, "\(String(describing: session.mode.observerReason))")
        let run = try #require(outcome.runs.first)
        #expect(run.phase("main") != nil)
        #expect(run.absent.isEmpty, "\(run.absent)")
    }

    @Test func uprobeWhereThePMUIsMissingIsAClearErrorAndAutoFallsBackToPtrace() throws {
        // A sysfs without the uprobe PMU, as on a kernel built without CONFIG_UPROBE_EVENTS.
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lp-sysfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/bus/event_source/devices/cpu", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var configuration = RunConfiguration(program: try RunFixtures.app(), arguments: [])
        configuration.sysfsRoot = root
        configuration.observer = .uprobe
        #expect {
            _ = try RunSession(configuration: configuration)
        } throws: { error in
            guard let error = error as? RunError, case .observer(.unavailable) = error else { return false }
            return error.description.contains("\(root)/bus/event_source/devices/uprobe/type")
                && error.description.contains("--observer ptrace")
        }
        configuration.observer = .auto
        let session = try RunSession(configuration: configuration)
        #expect(session.mode.observer == "ptrace")
        #expect(session.mode.observerReason?.contains("no uprobe PMU") == true, "\(String(describing: session.mode.observerReason))")
        let outcome = try RunHarness.run(try RunFixtures.app()) {
            $0.sysfsRoot = root
            $0.observer = .auto
        }
        #expect(outcome.runs.first?.phase("main") != nil, "ptrace observes the launch")
    }

    // MARK: Accuracy

    /// The probes and their ring buffers are the process's, shared by every session: two sessions
    /// launching at the same time must each get every hit of their own child (one session's read
    /// of the rings used to drop the other's hits).
    @Test func concurrentSessionsEachSeeEveryBoundary() throws {
        let programs = ["/usr/bin/git", "/usr/bin/gdb"]
        let outcomes = Mutex<[String: Result<RunHarness.Outcome, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: programs.count) { index in
            let result = Result { try RunHarness.run(programs[index], ["--version"], runs: 6) { $0.observer = .uprobe } }
            outcomes.withLock { $0[programs[index]] = result }
        }
        for program in programs {
            let outcome = try #require(try outcomes.withLock { $0[program] }?.get())
            #expect(outcome.runs.count == 6)
            for run in outcome.runs {
                #expect(run.absent.isEmpty, "\(program) run \(run.index): \(run.absent)")
                #expect(run.phase("loader.relocate") != nil && run.phase("main") != nil, "\(program) run \(run.index)")
            }
        }
    }

    /// Every span of the app fixture within max(0.2 ms, 1%) of the program's own clock, by the
    /// median error over runs (one run the scheduler delayed does not decide; a bias does).
    @Test func everyPhaseIsWithinTheProgramsOwnClock() throws {
        let app = try RunFixtures.app(libraries: ["alpha", "beta"])
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 7
        let outcome = try RunHarness.run(app, runs: runs, environment: RunFixtures.everyPhaseEnvironment(truth: truthPath)) {
            $0.observer = .uprobe
            $0.lingerNs = 2_000_000_000
        }
        try #require(outcome.runs.count == runs)
        let truth = try FixtureTruth(contentsOf: truthPath)
        for run in outcome.runs { #expect(run.absent.isEmpty, "\(run.absent)") }
        func compare(_ kind: String, _ name: String, _ what: String, measured: (LaunchRun) -> UInt64?) throws {
            let spans = truth.all(kind).filter { $0.name == name }
            try #require(spans.count == runs, "\(what): \(spans.count) truth lines")
            Self.expectMedianWithin(zip(outcome.runs, spans).map { (measured($0), $1.durationNs) }, what)
        }
        for library in ["libalpha.so", "libbeta.so"] {
            try compare("ctor", library, "loader.init \(library)") { $0.phase("loader.init", object: library)?.durationNs }
        }
        try compare("ctor", "program", "program.init") { $0.phase("program.init")?.durationNs }
        for name in ["willFinishLaunching", "restoreState", "didFinishLaunching"] {
            try compare("phase", name, name) { $0.phase(name)?.durationNs }
        }
        for task in ["sync", "prefetch"] {
            try compare("task", task, "task \(task)") { $0.phase("extendedLaunch", task: task)?.durationNs }
        }
        // main → first frame: main is a probe hit, the first frame the app's own stamp.
        let mains = truth.all("main")
        let frames = truth.all("first-frame")
        try #require(mains.count == runs && frames.count == runs)
        Self.expectMedianWithin(
            outcome.runs.indices.map { index in
                let run = outcome.runs[index]
                let measured = run.phase("firstFrame").flatMap { frame in run.phase("main").map { frame.startNs - $0.startNs } }
                return (measured, frames[index].beginNs - mains[index].beginNs)
            }, "main → first frame")
    }

    /// A small library's loader.init, observed with uprobes, costs what it costs without
    /// launchprof, within 2 µs. The truth: run-chain-app's libraries each stamp the entry of their
    /// only initializer (the function launchprof probes), so the program, run bare (no
    /// launchprof, no ptrace), reports the time from one library's initializer to the next one's:
    /// its loader.init as the loader spends it. Bare and observed launches alternate, one of each
    /// per pair, and the median of the pairs' differences decides: a machine that drifts (another
    /// build starting, the clock speed changing) moves both launches of a pair alike. (The bare
    /// launches run with launchprof's probes installed too — they are in every process that maps
    /// the file while launchprof lives — but only the observed run's hits are delivered.)
    @Test func smallLibraryInitializersCostWhatTheyCostBare() throws {
        let app = try ChainFixtures.app()
        let libraries = ["libchain3.so", "libchain2.so"]
        var differences: [String: [Int64]] = [:]
        var agreements: [String: [Int64]] = [:]
        for _ in 0..<25 {
            let bareTruth = FixtureTruth.temporaryPath()
            let observedTruth = FixtureTruth.temporaryPath()
            defer {
                try? FileManager.default.removeItem(atPath: bareTruth)
                try? FileManager.default.removeItem(atPath: observedTruth)
            }
            let status = try ChildProcess.run(app, environment: ["LP_FIXTURE_TRUTH": bareTruth])
            try #require(status == .exited(0))
            let outcome = try RunHarness.run(app, runs: 1, environment: ["LP_FIXTURE_TRUTH": observedTruth]) {
                $0.observer = .uprobe
            }
            let run = try #require(outcome.runs.first)
            let bare = try FixtureTruth(contentsOf: bareTruth).all("init")
            let selfObserved = try FixtureTruth(contentsOf: observedTruth).all("init")
            for library in libraries {
                let measured = try #require(run.phase("loader.init", object: library)?.durationNs, "\(library): not observed")
                let truth = try #require(bare.first { $0.name == library }?.durationNs, "\(library): no bare truth")
                let same = try #require(selfObserved.first { $0.name == library }?.durationNs)
                differences[library, default: []].append(Int64(measured) - Int64(truth))
                agreements[library, default: []].append(Int64(measured) - Int64(same))
            }
        }
        for library in libraries {
            let difference = try #require(Self.median(differences[library] ?? []))
            #expect(abs(difference) <= 2_000, "\(library) loader.init: observed − bare, median of pairs \(difference) ns; pairs \(differences[library] ?? [])")
            // And launchprof's figure agrees with the program's own clock in the same launches.
            let agreement = try #require(Self.median(agreements[library] ?? []))
            #expect(abs(agreement) <= 2_000, "\(library): launchprof − the program's clock, median \(agreement) ns")
        }
    }

    // MARK: Both observers

    @Test(arguments: ["app", "many", "/usr/bin/git", "/usr/bin/gdb"])
    func bothObserversSeeTheSamePhases(_ program: String) throws {
        let path: String
        switch program {
        case "app": path = try RunFixtures.app(libraries: ["alpha", "beta"])
        case "many": path = try RunFixtures.appWithManyLibraries(12)
        default: path = program
        }
        let arguments = program.hasPrefix("/") ? ["--version"] : []
        func phases(_ observer: ObserverChoice) throws -> [String] {
            let outcome = try RunHarness.run(path, arguments, runs: 2) { $0.observer = observer }
            let run = try #require(outcome.runs.last)
            #expect(run.absent.filter { !Self.afterMainUnderPtrace($0, observer) }.isEmpty, "\(observer): \(run.absent)")
            #expect(!run.failed, "\(observer): \(String(describing: run.exitStatus))")
            return run.phases.filter { $0.startNs < (run.metrics.timeToMainNs ?? 0) || $0.name == "main" }
                .map { "\($0.name) \($0.object ?? "") \($0.image.map(String.init) ?? "")" }
        }
        let uprobe = try phases(.uprobe)
        let ptrace = try phases(.ptrace)
        #expect(uprobe == ptrace)
        #expect(uprobe.contains { $0.hasPrefix("loader.relocate") } && uprobe.contains { $0.hasPrefix("main") })
    }

    @Test(arguments: [ObserverChoice.uprobe, .ptrace])
    func execChainsCrashesDaemonsAndTimeoutsWorkWithEitherObserver(_ observer: ObserverChoice) throws {
        // An exec chain: every image's boundaries, each image its own probes.
        let chain = try RunHarness.run(try RunFixtures.program("exec-chain"), environment: ["LP_EXEC_COUNT": "2"]) {
            $0.observer = observer
        }
        let run = try #require(chain.runs.last)
        #expect(run.phases.filter { $0.name == "main" }.map { $0.image ?? 0 } == [0, 1, 2])
        #expect(run.phases.filter { $0.name == "loader.relocate" }.count == 3)
        #expect(run.absent.filter { !Self.afterMainUnderPtrace($0, observer) }.isEmpty, "\(run.absent)")
        // A crash in a constructor: its stack, copied through ptrace and unwound either way.
        let marker = RunHarness.marker()
        let crashed = try #require(try RunHarness.run(
            try RunFixtures.program("crash"), environment: [String(marker.split(separator: "=")[0]): String(marker.split(separator: "=")[1])]
        ) { $0.observer = observer }.runs.first)
        #expect(crashed.exitStatus?.signal == SIGSEGV)
        #expect(crashed.warnings.contains { $0.code == .crashed && $0.message.contains("run-crash+0x") })
        // A daemon the child forks is found and killed.
        let daemon = try #require(try RunHarness.run(
            try RunFixtures.program("daemon"), environment: ["LP_DAEMON_US": "20000000"]
        ) { $0.observer = observer }.runs.first)
        #expect(daemon.warnings.contains { $0.code == .processesLeftBehind })
        // A program that never becomes ready is ended at the timeout, its timeline kept.
        let late = try #require(try RunHarness.run(try RunFixtures.program("never-ready")) {
            $0.observer = observer
            $0.readiness = .hook
            $0.timeoutNs = 300_000_000
            $0.terminationGraceNs = 200_000_000
        }.runs.first)
        #expect(late.timedOut)
        #expect(late.phase("main") != nil)
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    // MARK: Accounting

    /// With uprobes a phase's `observerNs` is its hits times the measured cost of one, so every
    /// library's loader.init carries at least the hit at its own start, and never more than the
    /// phase lasted (or the estimate would be wrong); the exec stop is in loader.map. With ptrace, the stops inside the phases
    /// add up to at most the run's `tracerPauseNs` (the stop at main follows main, in no span).
    @Test func observerCostIsCarriedByThePhaseItFellIn() throws {
        let app = try RunFixtures.app(libraries: ["alpha", "beta"])
        // The boundaries' accounting alone: the runtime probes on the loader (each relocation and
        // initializer, for run-time loads) hit during the start-up too, and are charged where
        // they fall (the first relocation's hit may precede the boundary's, in loader.map).
        let uprobe = try #require(try RunHarness.run(app, runs: 3) {
            $0.observer = .uprobe
            $0.runtimeProbes = false
        }.runs.last)
        let calibration = try UprobeCalibration.measured(pmuType: try UprobeSupport.pmuType().get())
        for library in ["libalpha.so", "libbeta.so", "libc.so.6"] {
            let phase = try #require(uprobe.phase("loader.init", object: library))
            let cost = try #require(phase.observerNs)
            #expect(cost >= min(calibration.emulatedHitNs, calibration.steppedHitNs), "\(library): \(cost) ns")
            #expect(cost <= phase.durationNs, "\(library): launchprof's part (\(cost) ns) is inside the phase (\(phase.durationNs) ns); \(calibration)")
        }
        // The exec stop (ptrace still controls the process) is loader.map's; later stops (the
        // SIGTERM that ends the app) are in the run's pause too.
        let map = try #require(uprobe.phase("loader.map"))
        #expect((map.observerNs ?? 0) > 0 && (map.observerNs ?? 0) <= (uprobe.tracerPauseNs ?? 0))

        let ptrace = try #require(try RunHarness.run(app, runs: 3) { $0.observer = .ptrace }.runs.last)
        let spans = ptrace.phases.filter { $0.durationNs > 0 && $0.endNs <= (ptrace.metrics.timeToMainNs ?? 0) }
        let inPhases = spans.reduce(UInt64(0)) { $0 + ($1.observerNs ?? 0) }
        let pause = try #require(ptrace.tracerPauseNs)
        #expect(inPhases <= pause)
        #expect(spans.filter { $0.name == "loader.init" }.allSatisfy { ($0.observerNs ?? 0) > 0 },
                "each library's breakpoint stop is inside its loader.init")
    }

    // MARK: Helpers

    /// The phases after `main` the ptrace observer cannot see (issue 35), absent with that reason.
    static func afterMainUnderPtrace(_ absent: AbsentPhase, _ observer: ObserverChoice) -> Bool {
        observer == .ptrace && absent.reason == RuntimeProbePlan.ptraceReason
    }

    static func median<Value: Comparable>(_ values: [Value]) -> Value? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }

    /// max(0.2 ms, 1%) of the truth, by the median absolute error over runs.
    static func expectMedianWithin(
        _ pairs: [(measured: UInt64?, truth: UInt64)], _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let errors = pairs.compactMap { pair -> (UInt64, UInt64)? in
            guard let measured = pair.measured else { return nil }
            return (measured > pair.truth ? measured - pair.truth : pair.truth - measured, pair.truth)
        }.sorted { $0.0 < $1.0 }
        guard errors.count == pairs.count, !errors.isEmpty else {
            Issue.record("\(what): not measured in every run", sourceLocation: sourceLocation)
            return
        }
        let (error, truth) = errors[errors.count / 2]
        #expect(error <= max(200_000, truth / 100), "\(what): median error \(error) ns (truth \(truth) ns)",
                sourceLocation: sourceLocation)
    }
}
