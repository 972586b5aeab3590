import Foundation
import LaunchprofReport
import LaunchprofSystem
@testable import LaunchprofTracing
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The uprobe holder keeps probes registered across launchprof processes: an invocation with the
/// default observer costs about what one with ptrace costs (it used to cost ~2 s more: the
/// probes' registration, and their release's RCU grace periods), and a wait for another
/// launchprof's release is said on stderr. Each test uses a holder of its own
/// (`LAUNCHPROF_UPROBE_HOLDER`), lingering briefly.
@Suite("run: the uprobe holder", .serialized)
struct UprobeHolderTests {
    private static func environment(holder: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LAUNCHPROF_UPROBE_HOLDER"] = holder
        environment["LAUNCHPROF_UPROBE_LINGER"] = "3"
        return environment
    }

    private static func monotonicNs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Interleaved invocations of each observer, so the machine's load falls on both alike: the
    /// uprobe invocation's median wall time is within 0.4 s of ptrace's (before the holder it was
    /// 1.7–3 s more, every time, on this host).
    @Test func anInvocationWithUprobesCostsAboutWhatOneWithPtraceCosts() throws {
        let environment = Self.environment(holder: "lp-test-holder-\(getpid())-warm")
        var uprobe: [UInt64] = []
        var ptrace: [UInt64] = []
        for round in 0..<4 {
            for observer in ["uprobe", "ptrace"] {
                let start = Self.monotonicNs()
                let outcome = try LaunchprofCLI.run(["run", "-r", "1", "--observer", observer, "/bin/true"], environment: environment)
                let elapsed = Self.monotonicNs() - start
                #expect(outcome.status == 0, "\(observer): \(outcome.stderr)")
                // The first may wait for a release of other launchprofs on the machine; none after it.
                if round > 0 { #expect(!outcome.stderr.contains("waiting"), "back-to-back: \(outcome.stderr)") }
                if observer == "uprobe" { uprobe.append(elapsed) } else { ptrace.append(elapsed) }
            }
        }
        // The first uprobe invocation started the holder (registration, hit calibration): the
        // three after it are the back-to-back case.
        let warm = Array(uprobe.dropFirst()).sorted()[1]
        let baseline = ptrace.sorted()[ptrace.count / 2]
        #expect(warm <= baseline + 400_000_000, "uprobe \(uprobe) ns vs ptrace \(ptrace) ns")
    }

    /// With no holder, a launchprof that finds another one releasing its probes (a process named
    /// `lp-uprobe-free`) waits for it, and says so on stderr while it waits.
    @Test func aWaitForAnotherLaunchprofsReleaseIsSaidOnStderr() throws {
        // A stand-in releaser: `cat` started under the releaser's name, alive until its stdin closes.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-release-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let releaserPath = directory.appendingPathComponent("lp-uprobe-free").path
        try FileManager.default.createSymbolicLink(atPath: releaserPath, withDestinationPath: "/bin/cat")
        let releaser = Process()
        releaser.executableURL = URL(fileURLWithPath: releaserPath)
        let releaserInput = Pipe()
        releaser.standardInput = releaserInput
        releaser.standardOutput = FileHandle.nullDevice
        try releaser.run()
        defer {
            try? releaserInput.fileHandleForWriting.close()
            releaser.waitUntilExit()
        }

        let process = Process()
        process.executableURL = try LaunchprofBinary.url()
        process.arguments = ["run", "-r", "1", "--observer", "uprobe", "/bin/true"]
        process.environment = Self.environment(holder: "lp-test-holder-\(getpid())-released")
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Read stderr until the message: launchprof must say what it waits for while it waits.
        var stderr = Data()
        while !String(decoding: stderr, as: UTF8.self).contains("lp-uprobe-free") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            stderr += chunk
        }
        let message = String(decoding: stderr, as: UTF8.self)
        #expect(message.contains("waiting for an earlier launchprof's uprobes to be released"), "\(message)")
        // (It names the first releaser it finds: on a shared machine, maybe another's.)
        #expect(message.contains("(process "), "\(message)")
        #expect(process.isRunning, "it waits while the release lasts")
        // The release ends: launchprof goes on and profiles the launch.
        try releaserInput.fileHandleForWriting.close()
        stderr += errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(String(decoding: stderr, as: UTF8.self))")
        // It says when the wait ended: the release finished, or (other launchprofs on a shared
        // machine releasing for longer) it gave up after its bound.
        let ending = String(decoding: stderr, as: UTF8.self)
        #expect(ending.contains("the release finished after") || ending.contains("gave up waiting"), "\(ending)")
    }

    /// A program rebuilt in place (a new inode at the same path, the same code offsets) is
    /// observed like the first build by the next launchprof: the holder's tracefs events are per
    /// inode, since the kernel resolves an event's path once. (Within one launchprof process a
    /// file rebuilt between launches keeps its first probes, as with PMU uprobes.)
    @Test func aProgramRebuiltInPlaceIsStillObserved() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-rebuilt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let program = directory.appendingPathComponent("true-copy").path
        for build in 0..<2 {
            // The same bytes each time, written to a new file renamed over the old one.
            let staging = program + ".new"
            try FileManager.default.copyItem(atPath: "/usr/bin/true", toPath: staging)
            _ = rename(staging, program)
            let report = directory.appendingPathComponent("report-\(build).json").path
            let outcome = try LaunchprofCLI.run(
                ["run", "-r", "2", "--observer", "uprobe", "--json", report, program],
                environment: Self.environment(holder: "lp-test-holder-\(getpid())-rebuilt"))
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
            let runs = try #require(json?["runs"] as? [[String: Any]])
            #expect(runs.count == 2)
            for run in runs {
                let phases = (run["phases"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                #expect(phases.contains("main") && phases.contains("loader.relocate"), "build \(build): \(phases)")
            }
        }
    }

    // MARK: What the holder holds, and for how long

    /// The lines of `uprobe_events` whose file is `path` (or, for "/ld-linux", any loader).
    private static func probes(of path: String) -> Int {
        // Read to its end: Foundation's String(contentsOfFile:) stops after tracefs's first page.
        let events = String(decoding: (try? FileHandle(forReadingAtPath: "/sys/kernel/tracing/uprobe_events")?.readToEnd()) ?? Data(), as: UTF8.self)
        return events.split(separator: "\n").filter { $0.contains(path.hasPrefix("/ld-") ? path : " \(path):") }.count
    }

    /// `held` probes of `path` leave `uprobe_events` within 6 s of a session's end (`endedNs`),
    /// and not before 1.5 s of its 2 s linger. Polled: the release is the holder's own timer,
    /// with nothing to wait on.
    private static func expectReleasedAfterTheLinger(
        of path: String, held: Int, endedNs: UInt64, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var after = held
        while after > 0, monotonicNs() - endedNs < 6_000_000_000 {
            var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
            nanosleep(&pause, nil)
            after = probes(of: path)
        }
        let releasedAfter = monotonicNs() - endedNs
        #expect(after == 0, "\(held) probes before, \(after) left \(releasedAfter / 1_000_000) ms after the session", sourceLocation: sourceLocation)
        #expect(
            releasedAfter >= 1_500_000_000, "kept for the linger (2 s): released after \(releasedAfter / 1_000_000) ms",
            sourceLocation: sourceLocation)
    }

    /// The lines of `uprobe_events` that hold `text`.
    private static func probeLines(containing text: String) -> [String] {
        let events = String(decoding: (try? FileHandle(forReadingAtPath: "/sys/kernel/tracing/uprobe_events")?.readToEnd()) ?? Data(), as: UTF8.self)
        return events.split(separator: "\n").map(String.init).filter { $0.contains(text) }
    }

    /// A client of the holder speaking its protocol directly: connected and greeted, with a
    /// launch in flight only when told (`launchBegins`), so a test decides the launch window.
    private final class RawClient {
        private let fd: Int32
        private var frames = UprobeHolderProtocol.FrameReader()

        /// Connected to the holder serving `socket` (a name in root's private directory).
        init(socket: String) throws {
            guard case .success(let fd) = UnixSocket.connect(PrivateDirectory.standardPath + "/" + socket) else {
                throw CocoaError(.fileNoSuchFile)
            }
            self.fd = fd
            var limit = timeval(tv_sec: 30, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            let greeting = try exchange(.hello(version: UprobeHolderProtocol.version))
            guard case .hello? = greeting else { throw CocoaError(.coderInvalidValue) }
        }

        deinit { close(fd) }

        /// Sends `request`; its reply, when it has one.
        @discardableResult
        func exchange(_ request: UprobeHolderProtocol.Request, replied: Bool = true) throws -> UprobeHolderProtocol.Reply? {
            let bytes = UprobeHolderProtocol.encode(request)
            guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw CocoaError(.fileWriteUnknown) }
            guard replied else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if let payload = try frames.next() { return try UprobeHolderProtocol.decodeReply(payload) }
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { throw CocoaError(.fileReadUnknown) }
                frames.append(chunk[..<count])
            }
        }
    }

    /// Polls `probes(of: path)` until `done` holds or `seconds` pass; the count last seen.
    private static func probes(of path: String, within seconds: Double, until done: (Int) -> Bool) -> Int {
        let deadline = monotonicNs() + UInt64(seconds * 1e9)
        var count = probes(of: path)
        while !done(count), monotonicNs() < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
            nanosleep(&pause, nil)
            count = probes(of: path)
        }
        return count
    }

    /// A launchprof kept running (its child waits on a FIFO), so the holder has a client while
    /// another session ends; it is connected once its child has said so.
    private final class Keeper {
        let process = Process()
        private let release: String

        /// `shell` runs the child's script: a copy of its own makes its probes the keeper's alone.
        init(environment: [String: String], directory: String, shell: String = "/bin/sh") throws {
            let ready = directory + "/ready"
            release = directory + "/release"
            #expect(mkfifo(ready, 0o600) == 0 && mkfifo(release, 0o600) == 0)
            process.executableURL = try LaunchprofBinary.url()
            process.arguments = ["run", "-r", "1", "--observer", "uprobe", "--timeout", "120", shell, "-c", "echo ready > \(ready); cat \(release)"]
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            watchdog = process.killed(after: 180)
            // The probes were armed before the spawn: once the child speaks, launchprof is a
            // client. Bounded: a launchprof that failed before its child ran ends the wait.
            let fd = open(ready, O_RDONLY | O_NONBLOCK)
            var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, Date() < deadline, poll(&polled, 1, 100) == 0 {}
            var byte: UInt8 = 0
            #expect(fd >= 0 && read(fd, &byte, 1) == 1, "the keeper's child did not start")
            close(fd)
        }

        private var watchdog: DispatchWorkItem?

        /// Ends the child's wait (no reader: it has ended already) and the keeper, bounded.
        func stop() {
            let fd = open(release, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
            process.waitUntilExit(within: 30)
            watchdog?.cancel()
        }
    }

    /// A session's probes on its own program leave `uprobe_events` within the linger after it
    /// ends, while another client (with no launch in flight) keeps the holder alive; the loader's probe (shared by every
    /// process) stays as long as the holder does.
    @Test func aSessionsProgramProbesAreReleasedWithinTheLinger() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-linger-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A program of its own inode: its probes are this test's alone.
        let program = directory + "/linger-app"
        try FileManager.default.copyItem(atPath: try RunFixtures.app(), toPath: program)
        let name = "lp-test-holder-\(getpid())-linger"
        var environment = Self.environment(holder: name)
        environment["LAUNCHPROF_UPROBE_LINGER"] = "2"
        let keeper = try Self.idleClient(socket: name, environment: environment)
        _ = try #require(Self.holderProcess(socket: name), "a holder runs")
        let loaderProbesBefore = Self.probes(of: "/ld-linux")
        #expect(loaderProbesBefore >= 1, "the first session holds the loader's probe")
        #expect(Self.probes(of: program) == 0)

        let outcome = try LaunchprofCLI.run(["run", "-r", "2", "--observer", "uprobe", program], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let ended = Self.monotonicNs()
        let during = Self.probes(of: program)
        #expect(during >= 2, "the program's initializer and main are probed: \(during); \(outcome.stderr)")
        Self.expectReleasedAfterTheLinger(of: program, held: during, endedNs: ended)
        #expect(Self.probes(of: "/ld-linux") >= loaderProbesBefore, "the loader's probe lingers with the holder")
        withExtendedLifetime(keeper) {}
    }

    /// A client with no launch in flight keeping a holder alive: a first session starts the
    /// holder (its probes are on /bin/true, shared with no test here), then this one connects.
    private static func idleClient(socket: String, environment: [String: String]) throws -> RawClient {
        let outcome = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "uprobe", "/bin/true"], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        return try RawClient(socket: socket)
    }

    /// No release while another client has a launch in flight (a release stalls every fork and
    /// exec on the machine): a session's program probes outlive their linger while a second
    /// client's launch runs — a real launchprof whose child waits, then a client that says when
    /// its launch begins and ends — and leave `uprobe_events` once that launch has ended, by its
    /// `launchEnded` or by its connection's close.
    @Test func noReleaseWhileAnotherClientsLaunchIsInFlight() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-inflight-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let program = directory + "/inflight-app"
        try FileManager.default.copyItem(atPath: try RunFixtures.app(), toPath: program)
        let name = "lp-test-holder-\(getpid())-inflight"
        var environment = Self.environment(holder: name)
        environment["LAUNCHPROF_UPROBE_LINGER"] = "1"

        // 1. A launchprof whose launch is in flight (its child waits on a FIFO).
        let keeper = try Keeper(environment: environment, directory: directory)
        // A client with nothing in flight keeps the holder alive once the keeper has gone.
        let idle = try RawClient(socket: name)
        var outcome = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "uprobe", program], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let held = Self.probes(of: program)
        #expect(held >= 2, "the program's initializer and main are probed: \(held)")
        // Three times the 1 s linger: still held, the keeper's launch still runs.
        var during = Self.probes(of: program, within: 3) { $0 < held }
        #expect(during == held, "released during another client's launch: \(held) probes, \(during) left")
        let launchEnded = Self.monotonicNs()
        keeper.stop()
        var after = Self.probes(of: program, within: 6) { $0 == 0 }
        #expect(after == 0, "\(held) probes, \(after) left \((Self.monotonicNs() - launchEnded) / 1_000_000) ms after the launch ended")

        // 2. A client that says when its launch begins and ends, the session's program run again.
        let client = try RawClient(socket: name)
        #expect(try client.exchange(.launchBegins) == .launchMayBegin)
        outcome = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "uprobe", program], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        during = Self.probes(of: program, within: 3) { $0 < held }
        #expect(during == held, "released during another client's launch: \(held) probes, \(during) left")
        try client.exchange(.launchEnded, replied: false)
        after = Self.probes(of: program, within: 6) { $0 == 0 }
        #expect(after == 0, "\(after) probes left after the launch ended")

        // 3. A launch whose client closes its connection without saying it ended.
        var closing: RawClient? = try RawClient(socket: name)
        #expect(try closing?.exchange(.launchBegins) == .launchMayBegin)
        outcome = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "uprobe", program], environment: environment)
        during = Self.probes(of: program, within: 3) { $0 < held }
        #expect(during == held, "released during another client's launch: \(held) probes, \(during) left")
        closing = nil
        after = Self.probes(of: program, within: 6) { $0 == 0 }
        #expect(after == 0, "\(after) probes left after the client closed")
        withExtendedLifetime((client, idle)) {}
    }

    /// A launch in flight defers releases for `maxLaunchNs` at most, counted from its begin.
    @Test func aLaunchInFlightDefersReleasesForABoundedTime() {
        let begun: UInt64 = 1_000_000_000
        #expect(UprobeHolder.launchInFlight([[begun]], now: begun + 1))
        #expect(UprobeHolder.launchInFlight([[], [begun, begun + 5]], now: begun + UprobeHolder.maxLaunchNs))
        #expect(!UprobeHolder.launchInFlight([[begun]], now: begun + UprobeHolder.maxLaunchNs))
        #expect(!UprobeHolder.launchInFlight([[], []], now: begun))
    }

    /// Runtime probes follow the holder's release rules: a session's probes on an interpreter
    /// of its own (a private copy of python3: its start, its run and its SDT import probes with
    /// their semaphores as reference counters) are held while it runs — its imports reach the
    /// report through the holder's payloads — and leave `uprobe_events` within the linger after
    /// it ends, while another client (no launch in flight) keeps the holder alive; libc's `dlopen` probes (every
    /// process maps libc) stay as long as the holder does.
    @Test func aSessionsRuntimeProbesAreReleasedWithinTheLinger() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-linger-rt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let python = directory + "/python3"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path, toPath: python)
        let name = "lp-test-holder-\(getpid())-linger-rt"
        var environment = Self.environment(holder: name)
        environment["LAUNCHPROF_UPROBE_LINGER"] = "2"
        let keeper = try Self.idleClient(socket: name, environment: environment)
        defer { withExtendedLifetime(keeper) {} }
        #expect(Self.probes(of: python) == 0)

        let report = directory + "/python.json"
        let outcome = try LaunchprofCLI.run(
            ["run", "-r", "1", "--observer", "uprobe", "--json", report, python, "-c", "import json"], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let ended = Self.monotonicNs()
        let lines = Self.probeLines(containing: " \(python):")
        #expect(lines.contains { $0.hasPrefix("p:launchprof/lpe_") && $0.contains(")") && $0.contains("a0=") },
                "an import probe with its semaphore and the module's name: \(lines)")
        let libcDlopens = Self.probeLines(containing: "/libc.so.6:").filter { $0.contains("launchprof/lpe_") || $0.contains("launchprof/lpr_") }
        #expect(libcDlopens.count >= 2, "libc's dlopen entry and return: \(libcDlopens)")
        let run = try #require(try JSONDecoder().decode(LaunchReport.self, from: Data(contentsOf: URL(fileURLWithPath: report))).runs.first)
        #expect(run.phases.contains { $0.name == "import" && $0.object == "json" && $0.source == "python" }, "\(run.phases.map(\.name))")

        Self.expectReleasedAfterTheLinger(of: python, held: lines.count, endedNs: ended)
        #expect(Self.probeLines(containing: "/libc.so.6:").filter { libcDlopens.contains($0) }.count == libcDlopens.count, "libc's probes linger with the holder")
    }

    /// A holder started with a linger of 0 serves the launchprof that started it (it used to end
    /// before that one could connect, which then measured without it), and ends once that one
    /// has left: within its release's grace periods, not the 10 s it waits for a first client.
    @Test func aHolderWithoutLingerServesItsStarterAndEndsWithIt() throws {
        let name = "lp-test-holder-\(getpid())-nolinger"
        var environment = Self.environment(holder: name)
        environment["LAUNCHPROF_UPROBE_LINGER"] = "0"
        let outcome = try LaunchprofCLI.run(["run", "-r", "1", "--observer", "uprobe", "/bin/true"], environment: environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("not using the uprobe holder"), "\(outcome.stderr)")
        guard let holder = Self.holderProcess(socket: name) else { return }  // gone already
        RunHarness.awaitExit(RunHarness.exitWatchers([holder]), timeoutMs: 8_000)
        // Ended: gone, or a zombie its reaper has not collected yet.
        let state = RunHarness.state(of: holder)
        #expect(state == nil || state == "Z", "the holder \(holder) outlived its only client by 8 s (state \(state.map(String.init) ?? "-"))")
    }

    /// An event a dead holder left in tracefs is deleted when the next holder starts, a live
    /// holder's (another session's program, still held) never is; the holder runs in `/`, under
    /// its own command line, with a ring on every CPU.
    @Test func aStartingHolderRemovesDeadHoldersEventsAndShowsNothingOfItsStarter() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-stale-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shell = directory + "/keeper-sh"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/bin/sh").resolvingSymlinksInPath().path, toPath: shell)
        let keeper = try Keeper(environment: Self.environment(holder: "lp-test-holder-\(getpid())-live"), directory: directory, shell: shell)
        defer { keeper.stop() }
        let liveBefore = Self.probes(of: shell)
        #expect(liveBefore >= 2, "the live holder holds the keeper's shell's entry and main: \(liveBefore)")

        let stale = "lpstale_\(getpid())"
        let definition = "p:launchprof/\(stale) /usr/bin/true:0x1000\n"
        let events = open("/sys/kernel/tracing/uprobe_events", O_WRONLY | O_APPEND)
        #expect(events >= 0 && write(events, definition, definition.utf8.count) == definition.utf8.count)
        close(events)
        #expect(FileManager.default.fileExists(atPath: "/sys/kernel/tracing/events/launchprof/\(stale)"))

        let name = "lp-test-holder-\(getpid())-fresh"
        let outcome = try LaunchprofCLI.run(
            ["run", "-r", "1", "--observer", "uprobe", "/bin/true"], environment: Self.environment(holder: name))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/sys/kernel/tracing/events/launchprof/\(stale)"), "the stale event was deleted")
        #expect(Self.probes(of: shell) == liveBefore, "the live holder's events stay")

        let holder = try #require(Self.holderProcess(socket: name))
        let commandLine = try String(contentsOfFile: "/proc/\(holder)/cmdline", encoding: .utf8).split(separator: "\0")
        #expect(commandLine.first == "lp-uprobe-hold", "\(commandLine)")
        #expect(!commandLine.contains("/bin/true"), "\(commandLine)")
        let cwd = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder)/cwd")
        #expect(cwd == "/")
        let perfEvents = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(holder)/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder)/fd/\($0)")) == "anon_inode:[perf_event]"
        }.count
        // One ring per CPU, and for each probe one event per CPU.
        let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        #expect(perfEvents >= cpus * 2, "\(perfEvents) perf events on \(cpus) CPUs")
    }

    /// The process serving `socket` (a name in root's private directory), by its command line.
    private static func holderProcess(socket: String) -> Int32? {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(name), let line = try? String(contentsOfFile: "/proc/\(name)/cmdline", encoding: .utf8) else { continue }
            let words = line.split(separator: "\0")
            if words.first == "lp-uprobe-hold", words.contains(Substring(socket)) { return pid }
        }
        return nil
    }
}
