import Foundation
import LaunchprofCore
import LaunchprofReport
import LaunchprofRenderers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The hazard scan of the prewarm part: a constructor that reads the wall clock (through the
/// vDSO: no system call) and connects a TCP socket to a listener the test opens.
@Suite("prewarm: hazards", .serialized)
struct PrewarmHazardTests {
    /// A listening TCP socket on 127.0.0.1 (an ephemeral port); the scan's connect lands here.
    private func listener() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private func hazards(_ program: String, port: UInt16?) throws -> PrewarmSummary {
        var environment = ["PW_INIT_US": "1000", "PW_POST_US": "1000"]
        if let port {
            environment["PW_HAZARDS"] = "1"
            environment["PW_PORT"] = "\(port)"
        }
        let outcome = try PrewarmHarness.run(program, environment: environment) { $0.hold = .fixed(ns: 10_000_000) }
        return try #require(outcome.summary.prewarm)
    }

    @Test(arguments: [(false, false), (true, true)])
    func wallClockAndConnectNameTheirFunction(stripped: Bool, exported: Bool) throws {
        let (fd, port) = try listener()
        defer { close(fd) }
        let program = try PrewarmHarness.app(stripped: stripped, exported: exported)
        let summary = try hazards(program, port: port)
        #expect(summary.hazardScanError == nil)
        #expect(!summary.prewarmSafe)
        let object = (program as NSString).lastPathComponent
        let clock = summary.hazards.first { $0.kind == .wallClock && $0.syscall == "clock_gettime" }
        #expect(clock?.detail == "CLOCK_REALTIME")
        #expect(clock?.function == "stamp_wall_clock", "\(summary.hazards)")
        #expect(clock?.object == object)
        // time(2) never enters libc's code: glibc binds it to the vDSO.
        let epoch = summary.hazards.first { $0.kind == .wallClock && $0.syscall == "time" }
        #expect(epoch?.function == "stamp_epoch_seconds", "\(summary.hazards)")
        let network = summary.hazards.first { $0.kind == .network }
        #expect(network?.syscall == "connect")
        #expect(network?.detail == "127.0.0.1:\(port)")
        #expect(network?.function == "open_telemetry_connection", "\(summary.hazards)")
        #expect(network?.object == object)
        // Both stay hazards, each with its reason; the program is not prewarm-safe because of them.
        #expect(clock?.severity == .hazard && epoch?.severity == .hazard && network?.severity == .hazard)
        #expect(clock?.why.contains("stale") == true)
        #expect(network?.why.isEmpty == false)
        #expect(!PrewarmHazard.prewarmSafe(summary.hazards.filter { $0.kind == .network || $0.kind == .wallClock }))
    }

    @Test func strippedWithoutExportsNamesObjectAndOffset() throws {
        let (fd, port) = try listener()
        defer { close(fd) }
        let program = try PrewarmHarness.app(stripped: true)
        let summary = try hazards(program, port: port)
        let object = (program as NSString).lastPathComponent
        let clock = try #require(summary.hazards.first { $0.kind == .wallClock })
        #expect(clock.function.hasPrefix(object + "+0x"), "\(clock)")
        // The offset is inside the program's text: its function is not main or the constructor.
        #expect(summary.hazards.contains { $0.kind == .network && $0.function.hasPrefix(object + "+0x") })
    }

    @Test func threadRandomnessUserDataAndLocksNameTheirFunction() throws {
        let home = NSTemporaryDirectory() + "prewarm-home-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try #require(FileManager.default.createFile(atPath: home + "/settings.conf", contents: Data("x".utf8)))
        let outcome = try PrewarmHarness.run(
            try PrewarmHarness.app(),
            environment: ["PW_HAZARDS": "2", "PW_INIT_US": "1000", "PW_POST_US": "1000", "HOME": home]
        ) { $0.hold = .fixed(ns: 10_000_000) }
        let hazards = try #require(outcome.summary.prewarm?.hazards)
        func find(_ kind: PrewarmHazard.Kind) -> PrewarmHazard? { hazards.first { $0.kind == kind } }
        #expect(find(.thread)?.function == "start_worker_thread", "\(hazards)")
        #expect(find(.thread)?.syscall == "pthread_create")
        #expect(hazards.filter { $0.kind == .thread }.count == 1, "one thread, reported once: \(hazards)")
        // glibc's malloc seeds its tcache key (8 bytes) in the thread's first allocation too.
        let seed = hazards.first { $0.kind == .randomness && $0.detail == "16 bytes" }
        #expect(seed?.function == "seed_random", "\(hazards)")
        // Randomness in a spawned process is a note (each process draws its own); the others
        // stay hazards.
        #expect(hazards.filter { $0.kind == .randomness }.allSatisfy { $0.severity == .note }, "\(hazards)")
        #expect(seed?.why.contains("fork") == true)
        for kind in [PrewarmHazard.Kind.thread, .userData, .fileLock] { #expect(find(kind)?.severity == .hazard, "\(kind)") }
        #expect(outcome.summary.prewarm?.prewarmSafe == false)
        #expect(find(.userData)?.function == "read_user_settings", "\(hazards)")
        #expect(find(.userData)?.detail == home + "/settings.conf")
        #expect(find(.fileLock)?.syscall == "flock")
        #expect(find(.fileLock)?.function == "read_user_settings", "\(hazards)")
    }

    @Test func aCleanProgramIsPrewarmSafe() throws {
        let summary = try hazards(try PrewarmHarness.app(), port: nil)
        #expect(summary.hazardScanError == nil)
        #expect(summary.hazards.isEmpty, "\(summary.hazards)")
        #expect(summary.prewarmSafe)
    }

    /// The Swift demo's pre-main randomness (the Swift runtime's hashing seed, malloc's tcache
    /// key, libstdc++'s start-up) is drawn by the runtimes on their own behalf: notes, not
    /// hazards, so the demo is prewarm-safe.
    @Test func theSwiftDemoIsPrewarmSafe() throws {
        let demo = try LaunchprofBinary.url().deletingLastPathComponent().appendingPathComponent("launchprof-demo-swift").path
        let outcome = try PrewarmHarness.run(demo, environment: ["LAUNCHPROF_DEMO_INIT_US": "1000"]) {
            $0.hold = .fixed(ns: 10_000_000)
        }
        let summary = try #require(outcome.summary.prewarm)
        #expect(summary.hazardScanError == nil)
        #expect(summary.hazards.allSatisfy { $0.severity == .note }, "\(summary.hazards)")
        #expect(summary.prewarmSafe)
    }

    /// The text says hazards and notes apart, each with its reason; notes alone leave the
    /// program prewarm-safe.
    @Test(arguments: [true, false])
    func textSaysHazardsAndNotesApart(withHazard: Bool) {
        var builder = LaunchSummaryBuilder()
        builder.add(PrewarmReportTests.run(saving: 30_000_000, pss: 2 << 20))
        var summary = builder.summary
        var hazards = [PrewarmHazard(kind: .randomness, syscall: "getrandom", detail: "8 bytes", object: "libswiftCore.so", function: "swift_stdlib_random")]
        if withHazard {
            hazards.append(PrewarmHazard(kind: .wallClock, syscall: "time", detail: "wall clock (vDSO)", object: "app", function: "stamp"))
        }
        summary.prewarm?.hazards = hazards
        summary.prewarm?.prewarmSafe = PrewarmHazard.prewarmSafe(hazards)
        #expect(summary.prewarm?.prewarmSafe == !withHazard)
        let report = LaunchReport(
            target: .init(path: "/bin/app", arguments: []), host: .init(kernel: "", cpu: "", cores: 1, libc: ""),
            mode: .init(runs: 1), runs: [], summary: summary)
        let lines = PrewarmTextRenderer().render(report, hold: "2s", freezeAt: "main").split(separator: "\n")
        let header = lines.first { $0.hasPrefix("hazards") }
        #expect(header?.hasSuffix(withHazard ? "1 hazard, 1 note in the prewarm part:" : "prewarm-safe, 1 note in the prewarm part:") == true, "\(String(describing: header))")
        #expect(lines.contains { $0.hasPrefix("  note   randomness: getrandom 8 bytes from swift_stdlib_random (libswiftCore.so): a spawned process draws its own") })
        #expect(lines.contains { $0.hasPrefix("  hazard wallClock: time wall clock (vDSO) from stamp (app): the time read") } == withHazard)
    }
}
