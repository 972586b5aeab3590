import CLaunchprof
import Foundation
import LaunchprofMonitor
import LaunchprofReport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The monitor's display watch on a real X server (Xvfb), on windows made before it connects:
/// the monitor learns a display from a launch's environment at its exec, so the launch's first
/// window can exist before the connection.
@Suite("Field displays", .serialized)
struct FieldDisplaysTests {
    @Test("a window made before the watch and shown after has its map and first frame; one shown before is not reported")
    func windowsMadeBeforeTheWatch() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let app = try FixtureBuilder.build(["frame-x11.c"], output: "monitor-displays/field-frame-x11", flags: ["-lxcb"])
        let work = try MonitorProcess.scratch("monitor-displays")
        defer { try? FileManager.default.removeItem(at: work) }

        // One instance has shown its window and drawn; another has made its window, not shown it.
        let shown = try HeldApp(app, hold: 2, display: server.display, truth: work.appendingPathComponent("shown").path)
        defer { shown.end() }
        try shown.waitFor("drawn")
        let made = try HeldApp(app, hold: 1, display: server.display, truth: work.appendingPathComponent("made").path)
        defer { made.end() }
        try made.waitFor("created")

        let seen = SeenEvents()
        let plan = try WatchedProgram.plan(app, loaderPhases: false)
        let displays = FieldDisplays(programs: [plan], say: { _ in }) { seen.add($0) }
        defer { displays.stop() }
        let reason = displays.watch(server.display)
        #expect(reason?.contains("first watched during this launch") == true, "\(reason ?? "nil")")

        // The shown window is hidden, shown again and drawn (the server has it all before the other
        // window is shown): no first showing of a watched window. Then the made one is shown and
        // draws its first frame.
        shown.release()
        try shown.waitFor("redrawn")
        made.release()
        let events = try seen.waitFor { events in
            events.contains { if case .display(made.pid, let event) = $0 { event.kind == .firstFrame } else { false } }
        }
        let own = events.compactMap { if case .display(made.pid, let event) = $0 { event } else { nil } }
        #expect(own.map(\.kind) == [.windowMapped, .firstFrame], "\(own)")
        #expect(events.allSatisfy { $0.pid == made.pid }, "a window shown before the watch was reported: \(events)")
        #expect(made.wait() == 0)  // FRAME_EXIT: it ends after its first frame

        let truth = try FixtureTruth(contentsOf: work.appendingPathComponent("made").path).entries
        let drawing = try #require(truth.first { $0.kind == "first-frame" }, "\(truth)")
        let frame = try #require(own.last)
        // The first frame is the app's drawing (not the server's painting of the map, done before
        // it): at or after the drawing request left the app, at most 20 ms after the app knew
        // the server had it (the watch's thread may run late on a loaded machine).
        #expect(frame.atNs >= drawing.beginNs && frame.atNs <= drawing.endNs + 20_000_000,
                "first frame at \(frame.atNs); drawn \(drawing.beginNs)…\(drawing.endNs)")
        #expect(frame.pid == made.pid && frame.display == server.display)
    }

    // MARK: Helpers

    /// frame-x11 with FRAME_HOLD: says what it did on stdout, waits for a byte on stdin.
    final class HeldApp {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        var pid: Int32 { process.processIdentifier }

        init(_ path: String, hold: Int, display: String, truth: String) throws {
            process.executableURL = URL(fileURLWithPath: path)
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["FRAME_HOLD"] = "\(hold)"
            environment["FRAME_EXIT"] = "1"
            environment["LP_FIXTURE_TRUTH"] = truth
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// Reads its next line (a blocking read of its stdout).
        func waitFor(_ line: String) throws {
            var text = ""
            while !text.hasSuffix("\n") {
                let data = output.fileHandleForReading.availableData
                guard !data.isEmpty else { throw MonitorProcess.Failure(description: "frame-x11 ended before saying \(line)") }
                text += String(decoding: data, as: UTF8.self)
            }
            #expect(text == line + "\n")
        }

        func release() { input.fileHandleForWriting.write(Data([0x0a])) }

        func wait() -> Int32 {
            process.waitUntilExit()
            return process.terminationStatus
        }

        func end() {
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// The events a watch delivered, with a pipe written at each so a test waits on it.
    final class SeenEvents: @unchecked Sendable {
        private let events = Mutex<[FieldEvent]>([])
        private let pipe = Pipe()

        func add(_ event: FieldEvent) {
            events.withLock { $0.append(event) }
            pipe.fileHandleForWriting.write(Data([1]))
        }

        /// Waits (at most 20 s) until `done` holds for the events seen; returns them.
        func waitFor(_ done: ([FieldEvent]) -> Bool) throws -> [FieldEvent] {
            let deadline = lp_now_ns() + 20_000_000_000
            while true {
                let now = events.withLock { $0 }
                if done(now) { return now }
                var descriptor = pollfd(fd: pipe.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
                let left = deadline > lp_now_ns() ? Int32((deadline - lp_now_ns()) / 1_000_000) : 0
                guard poll(&descriptor, 1, left) > 0 else {
                    throw MonitorProcess.Failure(description: "not seen in 20 s; seen: \(now)")
                }
                _ = pipe.fileHandleForReading.availableData
            }
        }
    }
}
