import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing
@testable import LaunchprofTracing

/// A fixed list of tracer events and hook lines through the real session layer (merge with the
/// monitor's events, timeline, warnings, observer accounting, outcome, summary) must give the
/// same JSON bytes as the golden file, generated before the tracing layer was redesigned.
@Suite("session: golden report from scripted events", .serialized)
struct SessionGoldenTests {
    @Test("scripted launches give the golden JSON report, byte for byte")
    func golden() throws {
        var slow = SessionScript.launch(pid: 4_101, scale: 2)
        slow.leftoverProcesses = [4_150]
        slow.lostSamples = 3
        // A hook line after the exit (a grandchild's) stays ordered before the exit.
        slow.hookLines.append(("begin", 7_000_000, "late"))
        var failed = SessionScript.launch(pid: 4_102, exit: .signaled(signal: 11, coreDumped: true))
        failed.events.insert(.unobservable(phase: "loader.map", reason: "scripted: not observed"), at: 2)
        let tracer = ScriptedTracer([
            SessionScript.launch(pid: 4_000),  // the warm-up
            SessionScript.launch(pid: 4_100), slow, failed,
        ])
        let session = try RunSession(configuration: SessionScript.configuration(runs: 3, warmup: 1), tracer: tracer)
        let runs = try SessionScript.runs(session)
        #expect(tracer.remaining == 0)
        let actual = try SessionScript.reportBytes(runs, mode: session.mode)
        try SchemaValidator.expectValid(actual, against: .launchReport, "scripted session report")
        let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Golden/session-scripted.json")
        let dump = FileManager.default.temporaryDirectory.appendingPathComponent("session-scripted.actual.json")
        try Data(actual).write(to: dump)
        let expected = try Data(contentsOf: url)
        #expect(Array(expected) == actual, "golden mismatch; actual output in \(dump.path)")
    }
}
