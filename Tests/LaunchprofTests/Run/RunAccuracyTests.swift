import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// `launchprof run` against programs that measure themselves: every span launchprof reports must
/// be within max(0.5 ms, 3%) of the fixture's own CLOCK_MONOTONIC figure for it.
/// Serialized: the spans are real time, and parallel tests on 2 cores would stretch the tracer's
/// stops, not the truth.
@Suite("run: accuracy against the program's own clock", .serialized)
struct RunAccuracyTests {
    @Test func libraryAndProgramInitializersAppPhasesFirstFrameAndExtendedLaunch() throws {
        let app = try RunFixtures.app(libraries: ["alpha", "beta"])
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 3
        // The linger lets the app write its last truth lines before launchprof ends it.
        let outcome = try RunHarness.run(app, runs: runs, environment: RunFixtures.everyPhaseEnvironment(truth: truthPath)) { $0.lingerNs = 2_000_000_000 }
        try #require(outcome.runs.count == runs)
        let truth = try FixtureTruth(contentsOf: truthPath)
        for run in outcome.runs {
            #expect(run.absent.isEmpty, "every boundary observable: \(run.absent)")
        }
        // The truth file holds the runs' lines in run order: the i-th line of a kind is run i's.
        func truthSpans(_ kind: String, _ name: String) -> [FixtureTruth.Entry] {
            truth.all(kind).filter { $0.name == name }
        }
        func compare(_ kind: String, _ name: String, _ what: String, measured: (LaunchRun) -> UInt64?) throws {
            let spans = truthSpans(kind, name)
            try #require(spans.count == runs, "\(what): \(spans.count) truth lines")
            RunHarness.expectMedianClose(
                zip(outcome.runs, spans).map { (measured($0), $1.durationNs) }, what)
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
        try expectMainToFirstFrameClose(outcome, truth, "main → first frame")
        for run in outcome.runs {
            #expect(run.metrics.timeToMainNs == run.phase("main")?.startNs)
            // The tracer's own stops happen before main (after it the child runs untouched).
            let pause = try #require(run.tracerPauseNs)
            #expect(pause > 0 && pause < (run.metrics.timeToMainNs ?? 0))
            let extended = try #require(run.metrics.extendedLaunchNs)
            let lastTaskEnd = try #require(run.phases.filter { $0.name == "extendedLaunch" }.map(\.endNs).max())
            #expect(extended == max(lastTaskEnd, try #require(run.metrics.timeToFirstFrameNs)))
        }
    }

    /// The loader runs library initializers in an order it computes; launchprof's loader.init
    /// entries must come in the order ld.so itself reports ("calling init:" in LD_DEBUG=libs).
    @Test(arguments: ["many", "/usr/bin/gdb", "/usr/bin/git"])
    func libraryInitializersRunInTheLoadersOrder(_ program: String) throws {
        let path = program == "many" ? try RunFixtures.appWithManyLibraries(12) : program
        let arguments = program == "many" ? [] : ["--version"]
        let expected = try loaderInitOrder(path, arguments)
        try #require(!expected.isEmpty)
        // Three runs: the first walks the link map, the later ones arm from what it learned
        // (or walk again reusing its names, when a mapping moved): all must agree with ld.so.
        let outcome = try RunHarness.run(path, arguments, runs: 3)
        try #require(outcome.runs.count == 3)
        for run in outcome.runs {
            let measured = run.phases.filter { $0.name == "loader.init" }.compactMap(\.object).map(realPath)
            #expect(measured == expected, "run \(run.index)")
            #expect(run.phase("main") != nil, "main observed (stripped programs: from the entry code)")
            #expect(!run.failed, "\(String(describing: run.exitStatus))")
            #expect(run.absent.isEmpty, "\(run.absent)")
        }
    }

    /// A stripped program's `main` comes from its entry code, armed with the program's other
    /// boundaries (no stop at __libc_start_main): timed against the app's own clock like an
    /// unstripped one's.
    @Test func strippedProgramsMainIsFoundAndTimed() throws {
        let app = try RunFixtures.app(libraries: ["alpha"], stripped: true)
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 3
        let outcome = try RunHarness.run(app, runs: runs, environment: [
            "LP_FIXTURE_TRUTH": truthPath, "LP_PROGRAM_BUSY_US": "2000", "LP_DRAW_US": "3000",
        ]) { $0.lingerNs = 2_000_000_000 }  // time to write the first-frame truth line
        try #require(outcome.runs.count == runs)
        let truth = try FixtureTruth(contentsOf: truthPath)
        for run in outcome.runs { #expect(run.absent.isEmpty, "\(run.absent)") }
        try expectMainToFirstFrameClose(outcome, truth, "stripped: main → first frame")
        let ctors = truth.all("ctor").filter { $0.name == "program" }
        RunHarness.expectMedianClose(
            zip(outcome.runs, ctors).map { ($0.phase("program.init")?.durationNs, $1.durationNs) },
            "stripped: program.init")
    }

    @Test func staticProgramHasNoLoaderPhasesButItsInitAndMain() throws {
        let program = try RunFixtures.staticProgram()
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let runs = 3
        let outcome = try RunHarness.run(program, runs: runs, environment: [
            "LP_FIXTURE_TRUTH": truthPath, "LP_PROGRAM_BUSY_US": "2000",
        ])
        try #require(outcome.runs.count == runs)
        for run in outcome.runs {
            let absent = Set(run.absent.map(\.phase))
            #expect(absent.isSuperset(of: ["loader.map", "loader.relocate", "loader.init"]))
            #expect(run.absent.allSatisfy { $0.reason.contains("statically linked") })
            #expect(!run.phases.contains { $0.name.hasPrefix("loader.") })
            #expect(run.phase("program.start") != nil, "libc's start-up is its own span")
            #expect(run.phase("main") != nil)
        }
        let truth = try FixtureTruth(contentsOf: truthPath)
        let ctors = truth.all("ctor").filter { $0.name == "program" }
        try #require(ctors.count == runs)
        RunHarness.expectMedianClose(
            zip(outcome.runs, ctors).map { ($0.phase("program.init")?.durationNs, $1.durationNs) },
            "static program.init")
    }

    @Test func execChainTimesEveryImage() throws {
        let program = try RunFixtures.program("exec-chain")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        // The first run meets images 1 and 2 before they are analysed, so it is done again: every
        // run reported observes every image. Three runs, judged by the median error: the span
        // between two mains ends where the tracer saw a stop and the app's clock reads after the
        // child was resumed, so one late wake-up on a loaded machine must not decide.
        let runs = 3
        let outcome = try RunHarness.run(program, runs: runs, environment: [
            "LP_FIXTURE_TRUTH": truthPath, "LP_EXEC_COUNT": "2", "LP_IMAGE_BUSY_US": "3000",
        ])
        try #require(outcome.runs.count == runs)
        for run in outcome.runs {
            #expect(run.phases.filter { $0.name == "main" }.map { $0.image ?? 0 } == [0, 1, 2])
            #expect(run.absent.isEmpty, "\(run.absent)")
            #expect(run.metrics.timeToMainNs == run.phases.last { $0.name == "main" }?.startNs)
        }
        // Between two mains: the image's 3 ms of work, its exec and the next image's loading.
        // The truth file's last 3 × runs main lines are the reported runs' (a repeated run's
        // lines come before the repeat's).
        let truth = try FixtureTruth(contentsOf: truthPath)
        let truthMains = Array(truth.all("main").suffix(3 * runs).map(\.beginNs))
        for index in 0..<2 {
            RunHarness.expectMedianClose(
                outcome.runs.enumerated().map { offset, run in
                    let mains = run.phases.filter { $0.name == "main" }.map(\.startNs)
                    let base = offset * 3
                    return (
                        mains.count == 3 ? mains[index + 1] - mains[index] : nil,
                        truthMains[base + index + 1] - truthMains[base + index]
                    )
                }, "main \(index) → main \(index + 1)")
        }
    }

    @Test func scriptIsLaunchedThroughItsInterpreter() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("lp-script-\(UUID().uuidString).sh").path
        try "#!/bin/sh\nexit 3\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let outcome = try RunHarness.run(script)
        let run = try #require(outcome.runs.first)
        #expect(run.exitStatus == RunExit(code: 3))
        #expect(run.phase("loader.relocate") != nil)
        #expect(run.phase("main") != nil)
    }

    /// `main` is a breakpoint (launchprof's clock), the first frame a hook (the app's clock):
    /// the span between them, run by run, checks the breakpoint against the app's own time of main.
    private func expectMainToFirstFrameClose(
        _ outcome: RunHarness.Outcome, _ truth: FixtureTruth, _ what: String
    ) throws {
        let mains = truth.all("main")
        let frames = truth.all("first-frame")
        try #require(mains.count == outcome.runs.count && frames.count == outcome.runs.count)
        RunHarness.expectMedianClose(
            outcome.runs.indices.map { index in
                let run = outcome.runs[index]
                let measured = run.phase("firstFrame").flatMap { frame in
                    run.phase("main").map { frame.startNs - $0.startNs }
                }
                return (measured, frames[index].beginNs - mains[index].beginNs)
            }, what)
    }

    // MARK: Truth from the loader itself

    private func loaderInitOrder(_ program: String, _ arguments: [String]) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["LD_DEBUG": "libs"]) { $1 }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // ld.so prints "calling init" for every object, with initializers or not; only those
        // with DT_INIT or DT_INIT_ARRAY (readelf's word) run any.
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "calling init: ") else { return nil }
            return realPath(String(line[range.upperBound...]))
        }.filter(hasInitializers)
    }

    private func hasInitializers(_ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = ["-dW", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return false }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.contains("(INIT)") || text.contains("(INIT_ARRAY)")
    }

    private func realPath(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
}
