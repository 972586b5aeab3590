import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// The phases after `main` of programs that never call launchprof (issue 35), from a real
/// `launchprof run` with the runtime probes: each against the program's own clock.
/// Serialized: the spans are real time on a shared 2-core machine.
@Suite("run: dlopen, toolkit and interpreter phases", .serialized)
struct RuntimePhaseTests {
    /// max(1 ms, 5%) of the truth: the bound the issue sets for a run-time load.
    static func dlopenTolerance(_ truthNs: UInt64) -> UInt64 { max(1_000_000, truthNs * 5 / 100) }

    /// A program that dlopens a library whose constructor spins 25 ms, 10 ms after `main`: a
    /// `dlopen` phase of that file within max(1 ms, 5%) of the program's own clock around the
    /// call, split into map, relocate and one init of that object — the init within the bound of
    /// the constructor's own clock — and the parts inside the whole.
    @Test func dlopenAfterMainMatchesTheProgramsClock() throws {
        let program = try ToolkitFixtures.dlopenProgram()
        let library = try RunFixtures.library("lpdl", directory: "toolkits")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 3
        let outcome = try RunHarness.run(
            program, runs: runs,
            environment: [
                "LP_FIXTURE_TRUTH": truthPath, "LP_DLOPEN": library, "LP_DLOPEN_DELAY_US": "10000",
                "LP_CTOR_lpdl_BUSY_US": "25000",
            ])
        try #require(outcome.runs.count == runs)
        let truth = try FixtureTruth(contentsOf: truthPath)
        let calls = truth.all("dlopen").filter { $0.name == "liblpdl.so" }
        let constructors = truth.all("ctor").filter { $0.name == "liblpdl.so" }
        try #require(calls.count == runs && constructors.count == runs, "\(truth.entries)")
        for (index, run) in outcome.runs.enumerated() {
            #expect(run.absent.filter { $0.phase.hasPrefix("dlopen") }.isEmpty, "run \(index): \(run.absent)")
            let load = try #require(run.phase(LaunchPhase.dlopen, object: "liblpdl.so"), "run \(index): \(run.phases.map(\.name))")
            #expect(load.source == "loader")
            let error = Self.difference(load.durationNs, calls[index].durationNs)
            #expect(
                error <= Self.dlopenTolerance(calls[index].durationNs),
                "run \(index): dlopen \(load.durationNs) ns, the program's clock \(calls[index].durationNs) ns")
            // It starts after main, 10 ms of the program's work later.
            let main = try #require(run.phase(LaunchPhase.main))
            #expect(load.startNs >= main.startNs + 10_000_000)
            let map = try #require(run.phase(LaunchPhase.dlopenMap, object: "liblpdl.so"), "run \(index): no dlopen.map")
            let relocate = try #require(run.phase(LaunchPhase.dlopenRelocate, object: "liblpdl.so"), "run \(index): no dlopen.relocate")
            let initialize = try #require(run.phase(LaunchPhase.dlopenInit, object: "liblpdl.so"), "run \(index): no dlopen.init")
            #expect(map.startNs == load.startNs && map.endNs <= relocate.startNs && relocate.endNs <= initialize.startNs)
            #expect(initialize.endNs <= load.endNs)
            let constructorError = Self.difference(initialize.durationNs, constructors[index].durationNs)
            #expect(
                constructorError <= Self.dlopenTolerance(constructors[index].durationNs),
                "run \(index): dlopen.init \(initialize.durationNs) ns, the constructor's clock \(constructors[index].durationNs) ns")
        }
    }

    static func difference(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }
}
