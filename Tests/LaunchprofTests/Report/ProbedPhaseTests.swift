import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// The runtime probes' spans on a run's timeline: phases with their source and thread, the app's
/// own hook phases first, and a span the process ended inside absent with its reason.
@Suite("Probed phases")
struct ProbedPhaseTests {
    static let t0 = PhaseTimelineTests.t0
    static func at(_ ns: UInt64) -> UInt64 { t0 + ns }

    private func timeline(_ spans: [ProbedSpan], hooks: [HookEvent] = []) throws -> PhaseTimeline {
        var events: [LaunchEvent] = [
            .spawned(atNs: Self.at(0)), .imageStarted(image: 0, path: "/opt/app", atNs: Self.at(300_000)),
            .mainReached(atNs: Self.at(1_000_000)),
        ]
        events += spans.map { .probed($0) } + hooks.map { .hook($0) }
        events.append(.exited(.exited(code: 0), atNs: Self.at(90_000_000)))
        return try PhaseTimeline(events: events)
    }

    @Test func spansBecomePhasesWithTheirSourceObjectAndThread() throws {
        let result = try timeline([
            ProbedSpan(name: "dlopen", startNs: Self.at(2_000_000), endNs: Self.at(30_000_000), object: "libspin.so", source: "loader"),
            ProbedSpan(name: "dlopen.init", startNs: Self.at(4_000_000), endNs: Self.at(29_000_000), object: "/x/libspin.so", source: "loader"),
            ProbedSpan(name: "dlopen", startNs: Self.at(5_000_000), endNs: Self.at(6_000_000), object: "libgl.so", source: "loader", thread: 4242),
            ProbedSpan(name: "willFinishLaunching", startNs: Self.at(31_000_000), endNs: Self.at(51_000_000), source: "gtk3"),
        ])
        let dlopen = try #require(result.phases.first { $0.name == "dlopen" && $0.object == "libspin.so" })
        #expect(dlopen.startNs == 2_000_000 && dlopen.durationNs == 28_000_000 && dlopen.source == "loader" && dlopen.thread == nil)
        let initialise = try #require(result.phases.first { $0.name == "dlopen.init" })
        #expect(initialise.object == "/x/libspin.so" && initialise.durationNs == 25_000_000)
        #expect(result.phases.first { $0.object == "libgl.so" }?.thread == 4242)
        let will = try #require(result.phases.first { $0.name == "willFinishLaunching" })
        #expect(will.source == "gtk3" && will.startNs == 31_000_000 && will.durationNs == 20_000_000)
    }

    @Test func theAppsHookPhaseTakesPrecedenceOverTheToolkits() throws {
        let result = try timeline(
            [
                ProbedSpan(name: "willFinishLaunching", startNs: Self.at(2_000_000), endNs: Self.at(9_000_000), source: "qt5"),
                ProbedSpan(name: "didFinishLaunching", startNs: Self.at(9_000_000), endNs: Self.at(12_000_000), source: "qt5"),
            ],
            hooks: [
                HookEvent(kind: .begin, name: "willFinishLaunching", atNs: Self.at(3_000_000)),
                HookEvent(kind: .end, name: "willFinishLaunching", atNs: Self.at(8_000_000)),
            ])
        let will = result.phases.filter { $0.name == "willFinishLaunching" }
        #expect(will.count == 1 && will.first?.source == "hook" && will.first?.startNs == 3_000_000)
        #expect(result.phases.first { $0.name == "didFinishLaunching" }?.source == "qt5")
    }

    @Test func aSpanTheProcessEndedInsideIsAbsentNotEstimated() throws {
        let result = try timeline([
            ProbedSpan(name: "import", startNs: Self.at(2_000_000), endNs: nil, object: "http.client", source: "python")
        ])
        #expect(!result.phases.contains { $0.name == "import" })
        let absent = try #require(result.absent.first { $0.phase == "import" })
        #expect(absent.reason == "import http.client began at 2000000 ns and the process ended before it did")
    }
}
