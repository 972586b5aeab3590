import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The default path (the uprobe observer) with the exec stop doing only what needs the child
/// stopped (options, CPU mask), the rest done before the spawn or once the child runs on: every
/// phase is still reported, bounded by what the program's own clock says; a fork in the first
/// initializer, a crash and an exec chain are still followed; nothing is left running or traced.
/// Serialized: spans are real time.
@Suite("run: the exec stop's work", .serialized)
struct ExecStopTests {
    private func markerEnvironment(_ marker: String) -> [String: String] {
        let parts = marker.split(separator: "=", maxSplits: 1)
        return [String(parts[0]): String(parts[1])]
    }

    /// Pids of `kind` lines that name a pid, as the fork-early fixture's fork writes them.
    private func forkedPids(_ truth: FixtureTruth) -> [Int32] {
        truth.all("daemon").compactMap { Int32($0.name) }
    }

    @Test func phasesEndWhereTheProgramsOwnClockSaysAndTheEarlyForkIsKilled() throws {
        let program = try RunFixtures.program("fork-early")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let marker = RunHarness.marker()
        var environment = markerEnvironment(marker)
        environment["LP_FIXTURE_TRUTH"] = truthPath
        let runs = 5
        let outcome = try RunHarness.run(program, runs: runs, environment: environment) { $0.observer = .uprobe }
        try #require(outcome.runs.count == runs)
        let truth = try FixtureTruth(contentsOf: truthPath)
        let constructors = truth.all("ctor")
        try #require(constructors.count == runs, "\(constructors.count) launches for \(runs) runs")
        for (run, constructor) in zip(outcome.runs, constructors) {
            #expect(run.absent.isEmpty, "run \(run.index): \(run.absent)")
            #expect(run.exitStatus?.code == 0, "run \(run.index)")
            let spawn = try #require(run.spawnedAt?.monotonicNs)
            let exec = try #require(run.phase("exec"), "run \(run.index)")
            let map = try #require(run.phase("loader.map"), "run \(run.index)")
            let relocate = try #require(run.phase("loader.relocate"), "run \(run.index)")
            let programInit = try #require(run.phase("program.init"), "run \(run.index)")
            // exec ends where ld.so starts: loader.map begins there, and the loader's phases
            // come before the program's first code, which the fixture stamps itself.
            #expect(exec.startNs == 0 && map.startNs == exec.durationNs, "run \(run.index)")
            #expect(exec.durationNs > 0 && map.durationNs > 0)
            #expect(spawn + relocate.startNs + relocate.durationNs <= constructor.beginNs, "run \(run.index)")
            // program.init starts at the probe a few instructions into the constructor.
            #expect(spawn + programInit.startNs <= constructor.beginNs + 50_000, "run \(run.index)")
            #expect(spawn + programInit.startNs + 200_000 >= constructor.beginNs, "run \(run.index)")
            let main = try #require(run.phase("main"))
            let truthMain = try #require(truth.all("main").first { $0.beginNs > constructor.endNs })
            #expect(spawn + main.startNs <= truthMain.beginNs, "run \(run.index)")
        }
        // Each early fork was traced from its fork (the options are set at the exec stop, before
        // the constructor runs) and killed with the launch.
        let forked = forkedPids(truth)
        #expect(forked.count == runs)
        let watchers = RunHarness.exitWatchers(forked)
        RunHarness.awaitExit(watchers, timeoutMs: 2000)
        #expect(RunHarness.processes(withMarker: marker).isEmpty, "nothing the launches forked is left")
    }

    @Test func anExecChainStillReportsTheLaterImages() throws {
        let program = try RunFixtures.program("fork-early")
        let outcome = try RunHarness.run("/usr/bin/env", [program], runs: 2) { $0.observer = .uprobe }
        try #require(outcome.runs.count == 2)
        for run in outcome.runs {
            #expect(run.phases.filter { $0.name == "main" }.map { $0.image ?? 0 } == [0, 1], "\(run.phases.map(\.name))")
            #expect(run.phases.contains { $0.name == "loader.relocate" && $0.image == 1 })
            #expect(run.absent.isEmpty, "\(run.absent)")
        }
    }

    @Test func aCrashIsCaughtWithItsStack() throws {
        let program = try RunFixtures.program("crash")
        let marker = RunHarness.marker()
        let outcome = try RunHarness.run(program, runs: 2, environment: markerEnvironment(marker)) { $0.observer = .uprobe }
        for run in outcome.runs {
            #expect(run.exitStatus?.signal == SIGSEGV)
            let crash = try #require(run.warnings.first { $0.code == .crashed })
            #expect(crash.message.contains("run-crash+0x"), "the crash stopped the child for its stack: \(crash.message)")
        }
        #expect(RunHarness.processes(withMarker: marker).isEmpty)
    }

    /// Pinned (the default), the child runs until the exec stop on the tracer's one CPU — the
    /// mask it inherits from the pinned tracer thread, not set again in the child — and gets its
    /// own mask back at `main` (ptrace observer) or at the exec stop (uprobes, nothing stops it
    /// at `main`), before any of its code.
    @Test(arguments: [ObserverChoice.ptrace, .uprobe])
    func pinnedChildRunsWithTheTracersCPUUntilItsMaskIsRestored(observer: ObserverChoice) throws {
        let all = try Self.allowedCPUs().count
        try #require(all >= 2, "this test needs a mask of two CPUs or more (has \(all))")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 2
        let outcome = try RunHarness.run(
            try RunFixtures.program("affinity"), runs: runs, environment: ["LP_FIXTURE_TRUTH": truthPath]
        ) {
            $0.observer = observer
            $0.pinCPU = true
        }
        #expect(outcome.runs.count == runs)
        let names = try FixtureTruth(contentsOf: truthPath).all("cpus").map(\.name)
        let constructor = observer == .ptrace ? 1 : all
        #expect(names.filter { $0.hasPrefix("constructor-") } == Array(repeating: "constructor-\(constructor)", count: runs), "\(names)")
        #expect(names.filter { $0.hasPrefix("main-") } == Array(repeating: "main-\(all)", count: runs), "\(names)")
    }
}

extension ExecStopTests {
    /// This process's CPU mask, the one launchprof restores ("Cpus_allowed_list: 0-1,4").
    static func allowedCPUs() throws -> [Int] {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let list = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        return list.dropFirst("Cpus_allowed_list:".count).split(separator: ",").flatMap { range -> [Int] in
            let bounds = range.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return bounds.count == 2 ? Array(bounds[0]...bounds[1]) : bounds
        }
    }

    /// The runs take turns on the CPUs launchprof may use (run i on the i-th from where it
    /// started), so no session is measured on one CPU only: the child's constructor, still
    /// pinned under the ptrace observer, reports where it ran.
    @Test func runsTakeTurnsOnEveryAllowedCPU() throws {
        let allowed = try Self.allowedCPUs()
        try #require(allowed.count >= 2, "this test needs a mask of two CPUs or more (has \(allowed.count))")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 2 * min(allowed.count, 4)
        _ = try RunHarness.run(
            try RunFixtures.program("affinity"), runs: runs, environment: ["LP_FIXTURE_TRUTH": truthPath]
        ) {
            $0.observer = .ptrace
            $0.pinCPU = true
        }
        let cpus = try FixtureTruth(contentsOf: truthPath).all("cpu").compactMap { Int($0.name.dropFirst("constructor-".count)) }
        #expect(cpus.count == runs, "\(cpus)")
        let turn = Array(cpus.prefix(runs / 2))
        #expect(Set(turn).count == turn.count, "one run on each of \(turn.count) CPUs: \(cpus)")
        #expect(Set(turn).isSubset(of: Set(allowed)), "\(cpus) within \(allowed)")
        if allowed.count <= runs / 2 {
            #expect(Set(turn) == Set(allowed), "every allowed CPU: \(cpus)")
            #expect(Array(cpus.suffix(runs / 2)) == turn, "the same turns again: \(cpus)")
        }
    }
}
