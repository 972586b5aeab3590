import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 32: whatever ends a run — its exit, a crash, a timeout, Ctrl-C of launchprof — every
/// boundary the child reached is in its timeline, under either observer, and nothing after
/// launchprof ended it is a metric. Timed against the fixtures' own clocks.
@Suite("run: a timeline for every outcome", .serialized)
struct OutcomeTimelineTests {
    static let observers: [ObserverChoice] = [.ptrace, .uprobe]
    static let preMain = ["exec", "loader.map", "loader.relocate", "loader.init", "program.init", "main"]

    /// A program spinning in main (re-entering it, so a uprobe on main fires every µs or two)
    /// ended by `--timeout 1`: main at the program's own time in every run.
    @Test(arguments: observers)
    func timeoutKeepsEveryBoundaryReached(observer: ObserverChoice) throws {
        let truthPath = FixtureTruth.temporaryPath()
        defer { unlink(truthPath) }
        let outcome = try RunHarness.run(
            try RunFixtures.program("spin"), runs: 3, environment: ["LP_FIXTURE_TRUTH": truthPath]
        ) { configuration in
            configuration.observer = observer
            configuration.timeoutNs = 1_000_000_000
        }
        let mains = try FixtureTruth(contentsOf: truthPath).all("main")
        try #require(mains.count == outcome.runs.count && outcome.runs.count == 3)
        var lags: [UInt64] = []
        for (run, truth) in zip(outcome.runs, mains) {
            #expect(run.outcome?.kind == .timedOut)
            for name in Self.preMain { #expect(run.phase(name) != nil, "\(observer): \(name) in \(run.phases.map(\.name)), absent \(run.absent)") }
            #expect(run.absent.filter { !UprobeObserverTests.afterMainUnderPtrace($0, observer) }.map(\.phase) == ["firstFrame"], "\(observer): \(run.absent)")
            #expect(run.metrics.timeToFirstFrameNs == nil && run.metrics.exitNs == nil)
            let main = try #require(run.phase("main")).startNs + (run.spawnedAt?.monotonicNs ?? 0)
            // Observed at main's first instructions; the program reads its clock a few later.
            #expect(main <= truth.beginNs, "\(observer): main at \(main), the program's clock \(truth.beginNs)")
            lags.append(truth.beginNs &- main)
        }
        // Within 1 ms of the program's own clock: the median run (a stop the scheduler held up
        // on a loaded machine does not decide; an observer that misplaces main does).
        #expect(lags.sorted()[lags.count / 2] <= 1_000_000, "\(observer): main → the program's clock \(lags) ns")
    }

    /// The same without the probe holder (its directory refused: PMU uprobes of launchprof's
    /// own, whose rings nobody reads while a launch runs): each launch is read as it ends, so one
    /// run's flood of hits on main cannot fill the rings for the next.
    @Test func timeoutKeepsEveryBoundaryWithoutTheHolder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-noholder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let truthPath = directory.appendingPathComponent("truth").path
        let json = directory.appendingPathComponent("r.json").path
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHPROF_UPROBE_HOLDER"] = directory.appendingPathComponent("absent/holder.sock").path
        let outcome = try LaunchprofCLI.run(
            ["run", "-r", "3", "--timeout", "1", "--observer", "uprobe", "--json", json,
             "--env", "LP_FIXTURE_TRUTH=\(truthPath)", try RunFixtures.program("spin")],
            environment: environment)
        #expect(outcome.stderr.contains("not using the uprobe holder"), "\(outcome.stderr)")
        let runs = try ReportFiles.readReport(json).runs
        let mains = try FixtureTruth(contentsOf: truthPath).all("main")
        try #require(runs.count == 3 && mains.count == 3)
        for (run, truth) in zip(runs, mains) {
            for name in Self.preMain { #expect(run.phase(name) != nil, "\(name): absent \(run.absent)") }
            let main = try #require(run.phase("main")).startNs + (run.spawnedAt?.monotonicNs ?? 0)
            #expect(main <= truth.beginNs && truth.beginNs - main <= 1_000_000, "main at \(main), the program's clock \(truth.beginNs)")
        }
    }

    /// A crash in the program's constructor: the loader's phases and the constructor's start are
    /// there, main is absent because of the crash, and the exit is the program's.
    @Test(arguments: observers)
    func crashKeepsEveryBoundaryReached(observer: ObserverChoice) throws {
        let truthPath = FixtureTruth.temporaryPath()
        defer { unlink(truthPath) }
        let outcome = try RunHarness.run(
            try RunFixtures.program("crash"), runs: 2, environment: ["LP_FIXTURE_TRUTH": truthPath, "LP_PROGRAM_BUSY_US": "2000"]
        ) { $0.observer = observer }
        let crashes = try FixtureTruth(contentsOf: truthPath).all("crash")
        try #require(crashes.count == outcome.runs.count)
        for (run, truth) in zip(outcome.runs, crashes) {
            #expect(run.outcome?.kind == .crashed && run.outcome?.signal == "SIGSEGV")
            for name in ["exec", "loader.map", "loader.relocate", "loader.init"] { #expect(run.phase(name) != nil, "\(observer): \(name)") }
            let main = try #require(run.absent.first { $0.phase == "main" })
            #expect(main.reason.contains("was killed by signal 11 (SIGSEGV) before main"), "\(main.reason)")
            // The constructor's start is observed before the program's own clock starts its work.
            let spawn = run.spawnedAt?.monotonicNs ?? 0
            let start = try #require(run.phases.last { $0.name == "loader.init" }).startNs + spawn
            #expect(start <= truth.beginNs)
            #expect(run.metrics.exitNs != nil, "the crash is the program's own end")
        }
    }

    /// A program that exits by itself (`--ready exit`): the whole timeline, to its exit.
    @Test(arguments: observers)
    func exitHasTheWholeTimeline(observer: ObserverChoice) throws {
        let truthPath = FixtureTruth.temporaryPath()
        defer { unlink(truthPath) }
        let outcome = try RunHarness.run(
            try RunFixtures.app(), runs: 2, environment: ["LP_FIXTURE_TRUTH": truthPath]
        ) { configuration in
            configuration.observer = observer
            configuration.readiness = .exit
        }
        let exits = try FixtureTruth(contentsOf: truthPath).all("exit")
        try #require(exits.count == outcome.runs.count)
        for (run, truth) in zip(outcome.runs, exits) {
            #expect(run.outcome?.kind == .completed)
            for name in Self.preMain + ["exit"] { #expect(run.phase(name) != nil, "\(observer): \(name)") }
            #expect(run.absent.filter { !UprobeObserverTests.afterMainUnderPtrace($0, observer) }.isEmpty, "\(run.absent)")
            let exit = try #require(run.metrics.exitNs) + (run.spawnedAt?.monotonicNs ?? 0)
            #expect(exit >= truth.beginNs, "the exit is seen after the program's last clock read")
        }
    }

    /// Ctrl-C (or SIGTERM) to launchprof during the second of five runs, `--json` holding the
    /// first: it exits 130 and the report is a complete document of what the runs so far show —
    /// the first run (timed out) and the interrupted one, each with its boundaries at the
    /// program's own time of main; no process and no temporary file left.
    @Test(arguments: [SIGINT, SIGTERM])
    func interruptionKeepsTheRunsSoFar(signal: Int32) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-interrupted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The fixture writes its truth into this FIFO as it reaches main: read here, it says the
        // second launch is in main — a synchronisation without sleeping. Opened read-write, so
        // the first writer's close is no end of file.
        let fifo = directory.appendingPathComponent("mains").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDWR | O_CLOEXEC)
        try #require(reader >= 0)
        defer { close(reader) }
        let report = directory.appendingPathComponent("report.json").path
        let marker = RunHarness.marker()
        let launchprof = Process()
        launchprof.executableURL = try LaunchprofBinary.url()
        launchprof.arguments = [
            "run", "--runs", "5", "--timeout", "1", "--json", report, "--env", marker,
            "--env", "LP_FIXTURE_TRUTH=\(fifo)", try RunFixtures.program("spin"),
        ]
        launchprof.standardOutput = FileHandle.nullDevice
        launchprof.standardError = FileHandle.nullDevice
        try launchprof.run()
        var lines: [String] = []
        var pending = ""
        var buffer = [UInt8](repeating: 0, count: 256)
        while lines.count < 2 {
            let count = read(reader, &buffer, buffer.count)
            try #require(count > 0)
            pending += String(decoding: buffer[..<count], as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                lines.append(String(pending[..<newline]))
                pending = String(pending[pending.index(after: newline)...])
            }
        }
        kill(launchprof.processIdentifier, signal)
        launchprof.waitUntilExit()
        #expect(launchprof.terminationStatus == 130)
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        #expect(left.sorted() == ["mains", "report.json"], "the report, no temporary file: \(left)")

        try SchemaValidator.expectValid(file: report, against: .launchReport)
        let document = try ReportFiles.readReport(report)
        try #require(document.runs.count == 2, "\(document.runs.map(\.outcome))")
        #expect(document.runs[0].outcome?.kind == .timedOut)
        #expect(document.runs[1].outcome == .interrupted(by: signal))
        #expect(document.runs[1].exitStatus?.killedBy == "launchprof was interrupted by \(RunOutcome.signalName(signal))")
        #expect(document.summary.runs == 2 && document.summary.failedRuns == 2)
        let truth = try FixtureTruth(text: lines.joined(separator: "\n"))
        for (run, main) in zip(document.runs, truth.all("main")) {
            for name in Self.preMain { #expect(run.phase(name) != nil, "\(name) in \(run.phases.map(\.name))") }
            let observed = try #require(run.phase("main")).startNs + (run.spawnedAt?.monotonicNs ?? 0)
            #expect(observed <= main.beginNs && main.beginNs - observed <= 10_000_000, "main at \(observed), the program's clock \(main.beginNs)")
            #expect(run.metrics.timeToFirstFrameNs == nil)
        }
    }
}
