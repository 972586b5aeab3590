import Foundation
import LaunchprofCore
import LaunchprofReport
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
        FileManager.default.createFile(atPath: home + "/settings.conf", contents: Data("x".utf8))
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
}
