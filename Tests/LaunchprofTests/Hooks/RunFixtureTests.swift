import Foundation
import Testing

/// The `run-*` fixtures themselves, run without launchprof: their work, exit statuses and truth
/// files are what the tracer's accuracy tests rely on.
@Suite("Run fixtures")
struct RunFixtureTests {
    static let path = ["PATH": "/usr/bin:/bin"]

    func run(_ program: String, _ settings: [String: String], descriptors: [Int32: Int32] = [:])
        throws -> (ChildProcess.Status, FixtureTruth)
    {
        let truthPath = FixtureTruth.temporaryPath()
        defer { unlink(truthPath) }
        let environment = Self.path.merging(settings) { $1 }.merging(["LP_FIXTURE_TRUTH": truthPath]) { $1 }
        let status = try ChildProcess.run(program, environment: environment, descriptors: descriptors)
        return (status, try FixtureTruth(contentsOf: truthPath))
    }

    @Test("library and program constructors do the configured work, before main")
    func constructors() throws {
        let app = try RunFixtures.app(libraries: ["lpa", "lpb"])
        let (status, truth) = try run(app, [
            "LP_CTOR_lpa_BUSY_US": "2000", "LP_CTOR_lpb_SLEEP_US": "3000",
            "LP_PROGRAM_BUSY_US": "1000", "LP_PROGRAM_SLEEP_US": "500", "LP_EXIT_CODE": "5",
        ])
        #expect(status == .exited(5))
        let a = try #require(truth.first("ctor", "liblpa.so"))
        let b = try #require(truth.first("ctor", "liblpb.so"))
        let program = try #require(truth.first("ctor", "program"))
        let main = try #require(truth.first("main"))
        #expect(a.durationNs >= 2_000_000)
        #expect(b.durationNs >= 3_000_000)
        #expect(program.durationNs >= 1_500_000)
        #expect(max(a.endNs, b.endNs) <= program.beginNs)
        #expect(program.endNs <= main.beginNs)
        let exit = try #require(truth.first("exit"))
        #expect(main.beginNs <= exit.beginNs)
    }

    @Test("phases, tasks and the first frame follow LP_PHASES and LP_TASKS")
    func appPhases() throws {
        let app = try RunFixtures.app()
        let (status, truth) = try run(app, [
            "LP_PHASES": "willFinishLaunching:1500:0,restoreState:0:2500",
            "LP_TASKS": "one:3000,two:1000", "LP_FIRST_FRAME": "1",
        ])
        #expect(status == .exited(0))
        let phases = truth.all("phase")
        #expect(phases.map(\.name) == ["willFinishLaunching", "restoreState"])
        #expect(phases[0].durationNs >= 1_500_000)
        #expect(phases[1].durationNs >= 2_500_000)
        #expect(phases[0].endNs <= phases[1].beginNs)
        #expect(Set(truth.all("task").map(\.name)) == ["one", "two"])
        #expect(try #require(truth.first("task", "one")).durationNs >= 3_000_000)
        let frame = try #require(truth.first("first-frame"))
        #expect(frame.beginNs >= phases[1].endNs)

        let (_, silent) = try run(app, ["LP_FIRST_FRAME": "0"])
        #expect(silent.first("first-frame") == nil)
    }

    @Test("many libraries: one constructor line each")
    func manyLibraries() throws {
        let app = try RunFixtures.appWithManyLibraries(24)
        let (status, truth) = try run(app, [:])
        #expect(status == .exited(0))
        let names = truth.all("ctor").map(\.name).filter { $0 != "program" }
        #expect(Set(names) == Set((0..<24).map { "liblpm\($0).so" }))
        #expect(names.count == 24)
    }

    @Test("a constructor that faults dies of SIGSEGV before main")
    func crashes() throws {
        let (status, truth) = try run(try RunFixtures.program("crash"), ["LP_PROGRAM_BUSY_US": "1000"])
        #expect(status == .signaled(SIGSEGV))
        #expect(try #require(truth.first("crash", "program")).durationNs >= 1_000_000)
        #expect(truth.first("main") == nil)

        let app = try RunFixtures.app(libraries: ["lpa", "lpb"])
        let (libraryStatus, libraryTruth) = try run(app, ["LP_CTOR_lpa_CRASH": "1"])
        #expect(libraryStatus == .signaled(SIGSEGV))
        #expect(libraryTruth.first("crash", "liblpa.so") != nil)
        #expect(libraryTruth.first("main") == nil)
    }

    @Test("the exec chain runs each image and can end in another program")
    func execChain() throws {
        let chain = try RunFixtures.program("exec-chain")
        let (status, truth) = try run(chain, ["LP_EXEC_COUNT": "3", "LP_EXIT_CODE": "4"])
        #expect(status == .exited(4))
        #expect(truth.all("main").map(\.name) == ["0", "1", "2", "3"])
        #expect(truth.all("exec").map(\.name) == ["0", "1", "2", "3"])
        let execs = truth.all("exec")
        #expect(zip(execs, execs.dropFirst()).allSatisfy { $0.endNs <= $1.beginNs })

        let app = try RunFixtures.app()
        let (finalStatus, finalTruth) = try run(chain, ["LP_EXEC_COUNT": "1", "LP_EXEC_FINAL": app, "LP_EXIT_CODE": "6"])
        #expect(finalStatus == .exited(6))
        #expect(finalTruth.all("main").map(\.name) == ["0", "1", "-"])
    }

    @Test("the static fixture has no interpreter and still reports its constructor and main")
    func staticProgram() throws {
        let program = try RunFixtures.staticProgram()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: program))
        // No PT_INTERP (type 3) among the ELF64 program headers.
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            bytes[offset..<(offset + MemoryLayout<T>.size)].enumerated().reduce(0) { $0 | T($1.element) << (8 * $1.offset) }
        }
        let phoff = Int(field(0x20, UInt64.self))
        let phentsize = Int(field(0x36, UInt16.self))
        let phnum = Int(field(0x38, UInt16.self))
        let types = (0..<phnum).map { field(phoff + $0 * phentsize, UInt32.self) }
        #expect(!types.contains(3))
        #expect(types.contains(1))
        let (status, truth) = try run(program, ["LP_PROGRAM_BUSY_US": "500", "LP_EXIT_CODE": "2"])
        #expect(status == .exited(2))
        #expect(try #require(truth.first("ctor", "program")).durationNs >= 500_000)
        #expect(truth.first("main") != nil)
    }

    @Test("the server listens on loopback and ends by itself")
    func server() throws {
        let (status, truth) = try run(
            try RunFixtures.program("server"), ["LP_SERVER_BUSY_US": "1000", "LP_SERVER_LINGER_US": "1000"])
        #expect(status == .exited(0))
        #expect(truth.first("listen") != nil)
    }

    @Test("the daemon fixture exits at once and leaves a live daemon (which the test ends)")
    func daemon() throws {
        let (status, truth) = try run(try RunFixtures.program("daemon"), ["LP_DAEMON_US": "2000000"])
        #expect(status == .exited(0))
        let daemon = try #require(truth.first("daemon"))
        let pid = try #require(pid_t(daemon.name))
        #expect(kill(pid, 0) == 0)
        kill(pid, SIGKILL)
    }

    @Test("ignore-term survives the SIGTERM it sends itself")
    func ignoresTerm() throws {
        let (status, truth) = try run(try RunFixtures.program("ignore-term"), ["LP_SLEEP_US": "1000"])
        #expect(status == .exited(0))
        #expect(truth.first("main") != nil)
    }

    @Test("never-ready sends no first frame and exits when its time is up")
    func neverReady() throws {
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        let (status, truth) = try run(
            try RunFixtures.program("never-ready"), ["LP_SLEEP_US": "1000", "LAUNCHPROF_HOOK_FD": "3"],
            descriptors: [3: pair.writer])
        #expect(status == .exited(0))
        #expect(truth.first("main") != nil)
        let kinds = ChildProcess.drain(pair.reader).map { String(decoding: $0, as: UTF8.self).split(separator: " ").first }
        #expect(kinds == ["begin", "end"])
    }
}
