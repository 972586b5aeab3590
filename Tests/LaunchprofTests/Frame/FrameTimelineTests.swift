import LaunchprofCore
import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// PhaseTimeline with the display server's events: which first frame counts under each readiness.
@Suite("PhaseTimeline: display frames")
struct FrameTimelineTests {
    static let t0 = PhaseTimelineTests.t0

    static func display(_ kind: DisplayEvent.Kind, _ offsetNs: UInt64) -> LaunchEvent {
        .display(DisplayEvent(kind: kind, atNs: t0 + offsetNs, pid: 42, window: "0x400001", display: ":9"))
    }

    /// spawn, exec, main at 2 ms, a window at 30 ms, its first frame at 45 ms, a hook's first
    /// frame at 50 ms (when `hooked`), the exit at 60 ms.
    static func launch(hooked: Bool) -> [LaunchEvent] {
        var events: [LaunchEvent] = [
            .spawned(atNs: t0), .imageStarted(image: 0, path: "/usr/bin/app", atNs: t0 + 300_000),
            .mainReached(atNs: t0 + 2_000_000),
            display(.windowMapped, 30_000_000), display(.firstFrame, 45_000_000),
        ]
        if hooked { events.append(PhaseTimelineTests.hook(.firstFrame, "", 50_000_000)) }
        events.append(.exited(.exited(code: 0), atNs: t0 + 60_000_000))
        return events
    }

    static func instant(_ timeline: PhaseTimeline, _ name: String) -> UInt64? {
        timeline.phases.first { $0.name == name }?.startNs
    }

    @Test func frameReadinessTakesTheDisplaysFrameEvenWithAHook() throws {
        let timeline = try PhaseTimeline(events: Self.launch(hooked: true), readiness: .frame)
        #expect(Self.instant(timeline, LaunchPhase.windowMapped) == 30_000_000)
        #expect(Self.instant(timeline, LaunchPhase.firstFrame) == 45_000_000)
        #expect(timeline.metrics.timeToFirstFrameNs == 45_000_000)
    }

    @Test func automaticReadinessPrefersTheHookThenTheDisplayThenTheExit() throws {
        let hooked = try PhaseTimeline(events: Self.launch(hooked: true), readiness: .automatic)
        #expect(hooked.metrics.timeToFirstFrameNs == 50_000_000)
        let plain = try PhaseTimeline(events: Self.launch(hooked: false), readiness: .automatic)
        #expect(plain.metrics.timeToFirstFrameNs == 45_000_000)
        #expect(Self.instant(plain, LaunchPhase.windowMapped) == 30_000_000)
        let windowless = Self.launch(hooked: false).filter { if case .display = $0 { false } else { true } }
        #expect(try PhaseTimeline(events: windowless, readiness: .automatic).metrics.timeToFirstFrameNs == 60_000_000)
    }

    @Test func exitAndHookReadinessIgnoreTheDisplay() throws {
        #expect(try PhaseTimeline(events: Self.launch(hooked: false), readiness: .exit).metrics.timeToFirstFrameNs == 60_000_000)
        #expect(try PhaseTimeline(events: Self.launch(hooked: false), readiness: .hook).metrics.timeToFirstFrameNs == nil)
    }

    @Test func frameReadinessWithoutAFrameIsAbsentWithItsReason() throws {
        let events = Self.launch(hooked: true).filter {
            if case .display(let event) = $0 { event.kind != .firstFrame } else { true }
        }
        let timeline = try PhaseTimeline(events: events, readiness: .frame)
        #expect(timeline.metrics.timeToFirstFrameNs == nil)
        #expect(timeline.absent.contains { $0.phase == LaunchPhase.firstFrame && $0.reason.contains("no window of the program showed a first frame") })
        #expect(try ReadinessPolicy(argument: "frame") == .frame && ReadinessPolicy.frame.argument == "frame")
    }

    /// Bench suites take `"ready": "frame"` as `run --ready frame` does.
    @Test func benchSuitesAcceptFrameReadiness() throws {
        let suite = try BenchSuite.parse(
            Array(#"{"version": 1, "launches": [{"name": "gui", "program": "gtk3-demo", "ready": "frame"}]}"#.utf8),
            path: "/ci/suite.json")
        #expect(suite.launches.first?.ready == .frame)
    }
}
