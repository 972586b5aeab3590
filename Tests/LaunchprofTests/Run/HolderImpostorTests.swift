import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// launchprof runs as root and asks its uprobe holder for probes, hits and the hit-cost
/// calibration; the holder listens on a socket. Another user listening where launchprof looks
/// (issue 33: uid 65534 bound the holder's abstract name first, and root's `run` printed that
/// process's figures) is refused with a message, is sent nothing, and the run measures without
/// a holder (PMU uprobes). The impostor (Fixtures/impostor-holder.c) answers every request with
/// "1 1 1": a calibration of 1 ns per hit, which a trusting launchprof would print.
@Suite("run: the uprobe holder is authenticated", .serialized)
struct HolderImpostorTests {
    /// The impostor, running as uid 65534 (`setpriv`), with what it was sent once stopped.
    private final class Impostor {
        let process = Process()
        private let output = Pipe()
        private var watchdog: DispatchWorkItem?

        /// Listens on `path` (it binds it) or, with `socket`, on that bound socket given as its
        /// stdin; as uid 65534 unless `sameUser`.
        init(path: String?, socket: Int32? = nil, sameUser: Bool = false) throws {
            let program = try FixtureBuilder.build(["impostor-holder.c"], output: "run/impostor-holder")
            process.executableURL = URL(fileURLWithPath: sameUser ? program : "/usr/bin/setpriv")
            process.arguments = (sameUser ? [] : ["--reuid=65534", "--regid=65534", "--clear-groups", program]) + (path.map { [$0] } ?? [])
            if let socket { process.standardInput = FileHandle(fileDescriptor: socket, closeOnDealloc: false) }
            process.standardOutput = output
            try process.run()
            // Bounded, whatever the test does: a failed expectation or a throw below never
            // leaves the impostor running (deinit), and a hung one is killed.
            watchdog = process.killed(after: 120)
            let ready = output.fileHandleForReading.availableData
            #expect(String(decoding: ready, as: UTF8.self).hasPrefix("listening"), "the impostor did not start")
        }

        /// Stops it; what it was sent ("connections N bytes M").
        func stop() -> String {
            process.terminate()
            let said = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit(within: 10)
            watchdog?.cancel()
            return String(decoding: said, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            watchdog?.cancel()
        }
    }

    private static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/lp-impostor-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: made)
    }

    /// A run with the holder at `holder`: it exits 0, and every run measured the loader and main
    /// (with PMU uprobes, since the holder was refused).
    private static func runMeasures(holder: String, observer: String) throws -> LaunchprofCLI.Outcome {
        let report = try temporaryDirectory() + "/report.json"
        defer { try? FileManager.default.removeItem(atPath: (report as NSString).deletingLastPathComponent) }
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHPROF_UPROBE_HOLDER"] = holder
        let outcome = try LaunchprofCLI.run(
            ["run", "-r", "3", "--observer", observer, "--json", report, "/bin/true"], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        let runs = try #require(json?["runs"] as? [[String: Any]])
        #expect(runs.count == 3)
        for run in runs {
            let phases = (run["phases"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(phases.contains("main") && phases.contains("loader.relocate"), "\(phases)")
        }
        return outcome
    }

    /// A socket in a directory another user owns is never connected to.
    @Test func aHolderInAnotherUsersDirectoryIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chown(directory, 65534, 65534) == 0)
        #expect(chmod(directory, 0o755) == 0)
        let impostor = try Impostor(path: directory + "/holder.sock")
        let outcome = try Self.runMeasures(holder: directory + "/holder.sock", observer: "uprobe")
        #expect(impostor.stop() == "connections 0 bytes 0")
        #expect(outcome.stderr.contains("not using the uprobe holder: its socket's directory \(directory) belongs to uid 65534"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("measuring without it"), "\(outcome.stderr)")
    }

    /// A socket in a private directory of root's that another user listens on (root bound it
    /// and handed it over): the kernel names the listener's uid, and launchprof sends it nothing.
    /// `--observer auto` chooses by launchprof's own measurement, not the impostor's "1 ns".
    @Test func aHolderServedByAnotherUserIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/holder.sock"
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let impostor = try Impostor(path: nil, socket: socket)
        let outcome = try Self.runMeasures(holder: path, observer: "auto")
        let said = impostor.stop()
        #expect(said == "connections 1 bytes 0", "connected once (to learn who listens), sent nothing: \(said)")
        #expect(outcome.stderr.contains("of uid 65534, not by uid 0"), "\(outcome.stderr)")
        #expect(!outcome.stdout.contains("costs 1 ns here"), "\(outcome.stdout)")
    }

    /// A listener of root's own that does not answer as a holder (its "1 1 1" line is no frame
    /// of the protocol) is refused after the greeting: its reply is decoded as untrusted input,
    /// nothing more is sent, and the run measures without it.
    @Test func aListenerThatDoesNotSpeakTheProtocolIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let impostor = try Impostor(path: directory + "/holder.sock", sameUser: true)
        let outcome = try Self.runMeasures(holder: directory + "/holder.sock", observer: "uprobe")
        let said = impostor.stop()
        #expect(outcome.stderr.contains("did not answer as a holder of protocol"), "\(outcome.stderr)")
        // The greeting alone: a 4-byte length and a 5-byte hello.
        #expect(said == "connections 1 bytes 9", "\(said)")
    }
}
