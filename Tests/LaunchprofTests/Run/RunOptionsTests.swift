import Foundation
import LaunchprofReport
import Testing

@testable import LaunchprofCore

@Suite("run: options", .serialized)
struct RunOptionsTests {
    /// The child's environment is the user's plus launchprof's own variables; what launchprof
    /// itself runs under (LD_PRELOAD, LD_AUDIT) stays out unless passed with --env.
    @Test func childEnvironmentLeavesOutWhatLaunchprofRunsUnder() throws {
        let output = temporaryPath("env")
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try RunHarness.run("/usr/bin/env") {
            $0.inheritedEnvironment["LD_PRELOAD"] = "/nonexistent/interposer.so"
            $0.inheritedEnvironment["LP_USER_VARIABLE"] = "kept"
            $0.output = .file(output)
        }
        let lines = Set(try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init))
        #expect(!lines.contains { $0.hasPrefix("LD_PRELOAD=") })
        #expect(lines.contains("LP_USER_VARIABLE=kept"))
        // A single digit: dash and every POSIX shell can redirect to it.
        #expect(lines.contains("LAUNCHPROF_HOOK_FD=9"))

        try FileManager.default.removeItem(atPath: output)
        _ = try RunHarness.run("/usr/bin/env", environment: ["LD_PRELOAD": ""]) {
            $0.output = .file(output)
        }
        let explicit = try String(contentsOfFile: output, encoding: .utf8)
        #expect(explicit.split(separator: "\n").contains("LD_PRELOAD="), "--env passes it on purpose")
    }

    /// Pinning the child to the tracer's CPU until main must not change what the program sees:
    /// Go's runtime sizes GOMAXPROCS from the CPU mask before main.main, so a Go program is not
    /// pinned, and prints the same GOMAXPROCS under launchprof as on its own.
    @Test func goProgramSeesItsOwnCPUMask() throws {
        let program = try GoFixture.build()
        let bare = Process()
        bare.executableURL = URL(fileURLWithPath: program)
        let pipe = Pipe()
        bare.standardOutput = pipe
        try bare.run()
        let alone = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bare.waitUntilExit()
        try #require(alone.contains("GOMAXPROCS"))

        let output = temporaryPath("gomaxprocs")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = try RunHarness.run(program) { $0.output = .file(output) }
        let traced = try String(contentsOfFile: output, encoding: .utf8)
        #expect(traced == alone)
        #expect(outcome.runs.first?.phase("main") != nil, "main.main observed")
    }

    /// `--ready stdout:REGEX`: ready at the first matching line; the output still passes through.
    @Test func readyAtTheFirstMatchingStdoutLine() throws {
        let output = temporaryPath("stdout")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let script = "echo starting; sleep 0.2; echo 'Listening on port 8080'; exec sleep 30"
        let outcome = try RunHarness.run("/bin/sh", ["-c", script]) {
            $0.readiness = try .stdout("Listening on port [0-9]+")
            $0.output = .file(output)
            $0.timeoutNs = 10_000_000_000
            $0.terminationGraceNs = 100_000_000
        }
        let run = try #require(outcome.runs.first)
        // `exec sleep` makes the ready line image 1's.
        let firstFrame = try #require(run.phases.first { $0.name == "firstFrame" })
        #expect(firstFrame.startNs >= 200_000_000, "not before the line was printed")
        #expect(firstFrame.startNs < 5_000_000_000, "not at the end of the sleep")
        #expect(!run.failed && !run.timedOut)
        let passedThrough = try String(contentsOfFile: output, encoding: .utf8)
        // The first launch met /usr/bin/sleep before it was analysed and was done again: each
        // launch passed its two lines through.
        #expect(passedThrough.hasSuffix("starting\nListening on port 8080\n"))
        #expect(Set(passedThrough.split(separator: "\n")) == ["starting", "Listening on port 8080"])
    }

    /// A burst of hook calls arrives whole: the channel is a stream (a Unix datagram socket
    /// would queue only ten events and drop the rest while launchprof is not reading).
    @Test func burstOfHookCallsIsDeliveredWhole() throws {
        let app = try RunFixtures.app()
        let names = (0..<200).map { "phase\($0)" }
        let outcome = try RunHarness.run(app, environment: [
            "LP_PHASES": names.map { "\($0):0:0" }.joined(separator: ","), "LP_FIRST_FRAME": "1",
        ])
        let run = try #require(outcome.runs.first)
        let measured = run.phases.map(\.name).filter { $0.hasPrefix("phase") }
        #expect(measured == names)
        #expect(!run.warnings.contains { $0.code == .beginWithoutEnd || $0.code == .endWithoutBegin })
    }

    /// `--cold` measures residency instead of assuming it: a file nobody maps is fully evicted.
    @Test func coldEvictionIsMeasured() throws {
        let path = temporaryPath("cold")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = 4 << 20
        try Data(repeating: 0x5a, count: size).write(to: URL(fileURLWithPath: path))
        _ = try Data(contentsOf: URL(fileURLWithPath: path))  // now resident
        let residency = PageCache.evict([path])
        #expect(residency.totalBytes == UInt64(size))
        #expect(residency.residentBytes == 0)
    }

    /// A program just built: its pages are dirty, which the kernel's eviction skips until they
    /// are written. `--cold` writes them first, so they go too.
    @Test func coldEvictsAFileJustWritten() throws {
        let path = temporaryPath("dirty")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = 4 << 20
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        let bytes = [UInt8](repeating: 0x5a, count: size)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, size) }
        close(fd)
        try #require(written == size)
        let residency = PageCache.evict([path])
        #expect(residency.totalBytes == UInt64(size))
        #expect(residency.residentBytes == 0, "a file just written is evicted")
    }

    @Test func coldRunsReportResidencyOfTheClosure() throws {
        let app = try RunFixtures.app(libraries: ["coldlib"])
        let outcome = try RunHarness.run(app) { $0.cold = true }
        let run = try #require(outcome.runs.first)
        let total = try #require(run.closureBytes)
        let resident = try #require(run.residentBeforeBytes)
        let files = [app, URL(fileURLWithPath: app).deletingLastPathComponent().appendingPathComponent("libcoldlib.so").path]
        let ownBytes = files.reduce(UInt64(0)) { sum, file in
            sum + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? UInt64) ?? 0)
        }
        #expect(total > ownBytes, "the closure includes libc and the loader")
        // The fixture's own files are mapped by no one and must have been evicted; what stays
        // resident is what live processes map (libc, the loader).
        #expect(resident <= total - ownBytes)
    }

    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("lp-\(name)-\(UUID().uuidString)").path
    }
}
