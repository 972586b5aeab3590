import LaunchprofAnalysis
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// Whatever an app sends on the hook channel and whatever order events come in, the report
/// layer produces a report: no trap, valid JSON, a rendering.
@Suite("Report robustness")
struct ReportRobustnessTests {
    @Test("random hook lines and boundaries, with extreme times, never trap")
    func randomEvents() throws {
        var generator = SplitMix64(seed: 2024)
        let kinds = ["begin", "end", "first-frame", "extend", "finish-extend", "bogus", ""]
        let names = ["", "a", "b c", "x/y", "\u{1}", String(repeating: "t", count: 200)]
        func time() -> String {
            switch generator.next() % 5 {
            case 0: return "-"
            case 1: return String(UInt64.max - generator.next() % 10)
            case 2: return String(generator.next() % 1_000)
            case 3: return "12x"
            default: return String(1_000_000 + generator.next() % 100_000_000)
            }
        }
        var builder = LaunchSummaryBuilder()
        for index in 0..<80 {
            var text = ""
            for _ in 0..<Int(generator.next() % 30) {
                let kind = kinds[Int(generator.next() % UInt64(kinds.count))]
                let name = names[Int(generator.next() % UInt64(names.count))]
                text += "\(kind) \(time()) \(name)\n"
            }
            let parsed = HookChannelParser.parse(Array(text.utf8), receivedAtNs: generator.next() % 10_000_000)
            var events: [LaunchEvent] = [.spawned(atNs: generator.next() % 2_000_000)]
            let boundaries: [(UInt64) -> LaunchEvent] = [
                { .imageStarted(image: Int($0 % 3), path: "/p", atNs: $0) }, { .relocationStarted(atNs: $0) },
                { .relocationFinished(atNs: $0) }, { .objectInitStarted(path: "/l.so", atNs: $0) },
                { .entryReached(atNs: $0) }, { .programInitStarted(atNs: $0) }, { .mainReached(atNs: $0) },
                { .ready(reason: "r", atNs: $0) }, { _ in .unobservable(phase: "main", reason: "x") },
                { .exited(.exited(code: 0), atNs: $0) },
            ]
            for _ in 0..<Int(generator.next() % 12) {
                let time = generator.next() % 4 == 0 ? UInt64.max - generator.next() % 5 : generator.next() % 50_000_000
                events.append(boundaries[Int(generator.next() % UInt64(boundaries.count))](time))
            }
            events += parsed.events.map { LaunchEvent.hook($0) }
            events.shuffle(using: &generator)
            if case .spawned = events.first {} else { events.insert(.spawned(atNs: 0), at: 0) }
            let readiness: ReadinessPolicy = [.automatic, .exit, .hook, .listen][Int(generator.next() % 4)]
            let timeline = try PhaseTimeline(events: events, readiness: readiness)
            for phase in timeline.phases {
                #expect(phase.startNs.addingReportingOverflow(phase.durationNs).overflow == false)
            }
            builder.add(LaunchRun(index: index, pid: 1, timeline: timeline))
        }
        let report = LaunchReport(
            target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode, runs: [],
            summary: builder.summary)
        _ = try TextWaterfallRenderer(colour: true).render(report)
        try SchemaValidator.expectValid(try LaunchReportWriter.encode(report), against: .launchReport, "random timelines")
    }
}
