import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofReport
@testable import LaunchprofTracing

/// The rule for spans a kernel loss may have stretched: scripted boundary hits of one launch and
/// the holder's loss windows, through `PendingUprobeHits.observation` and `PhaseTimeline` as a
/// run builds them. A span with a window inside it (or across either end) is absent with the
/// window; every other span stays measured, to the nanosecond.
@Suite struct PendingUprobeHitsLossTests {
    static let spawn: UInt64 = 5_000_000_000
    static func at(_ microseconds: UInt64) -> UInt64 { spawn + microseconds * 1_000 }

    static let loader = "/lib64/ld-linux-x86-64.so.2"
    static let program = "/opt/app"
    static let library = "/lib/libA.so"

    /// One image: exec at 1 ms, relocation from 2 ms, libA's initializers at 4 ms, the entry at
    /// 6 ms, the program's initializer at 7 ms, `main` at 9 ms; exit at 12 ms.
    static let hits: [(Boundary, UInt64)] = [
        (.relocationStart, at(2_000)), (.objectInit(path: library), at(4_000)), (.entry, at(6_000)),
        (.programInit, at(7_000)), (.main, at(9_000)),
    ]

    static let measured: [String: UInt64] = [
        LaunchPhase.loaderMap: 1_000_000, LaunchPhase.loaderRelocate: 2_000_000, LaunchPhase.loaderInit: 2_000_000,
        LaunchPhase.programStart: 1_000_000, LaunchPhase.programInit: 2_000_000,
    ]

    static func timeline(losses: [UprobeHolderProtocol.ProcessHits.LossWindow]) throws -> PhaseTimeline {
        var plan = ImagePlan(
            programPath: program, isPositionIndependent: true, entry: 0x1000, loader: nil, main: 0x2000,
            libcStartMain: nil, initializers: [:], unobservable: [])
        let targets = hits.enumerated().map { number, hit in
            UprobeTarget(
                path: hit.0 == .relocationStart ? loader : program, offset: UInt64(0x100 * (number + 1)),
                action: hit.0, emulated: true)
        }
        plan.uprobes = targets
        let pending = PendingUprobeHits(
            pid: 77, observer: UprobeObserver(pmuType: 0),
            calibration: UprobeCalibration(emulatedHitNs: 0, steppedHitNs: 0), imageStarts: [at(1_000)], plans: [plan])
        var drained = UprobeObserver.Drained()
        drained.samples = zip(targets, hits).map { UprobeObserver.Sample(key: $0.key, pid: 77, timeNs: $1.1) }
        drained.lost = losses.reduce(0) { $0 + $1.count }
        drained.losses = losses
        let traced: [LaunchEvent] = [
            .spawned(atNs: spawn), .imageStarted(image: 0, path: program, atNs: at(1_000)),
            .exited(.exited(code: 0), atNs: at(12_000)),
        ]
        let observation = pending.observation(of: traced, drained: drained)
        #expect(observation.lostSamples == drained.lost)
        return try PhaseTimeline(events: observation.events)
    }

    static func window(_ fromMicroseconds: UInt64, _ toMicroseconds: UInt64, lost: UInt64 = 3) -> UprobeHolderProtocol.ProcessHits.LossWindow {
        .init(beginNs: at(fromMicroseconds), endNs: at(toMicroseconds), count: lost)
    }

    /// Each measured span's duration; the absent ones' reasons.
    static func spans(_ timeline: PhaseTimeline) -> (measured: [String: UInt64], absent: [String: String]) {
        let names = Set(measured.keys)
        let spans = Dictionary(
            timeline.phases.filter { names.contains($0.name) }.map { ($0.name, $0.durationNs) }, uniquingKeysWith: { $1 })
        let absent = Dictionary(timeline.absent.map { ($0.phase, $0.reason) }, uniquingKeysWith: { $1 })
        return (spans, absent)
    }

    static func measured(except: [String]) -> [String: UInt64] {
        measured.filter { !except.contains($0.key) }
    }

    @Test func withoutALossEverySpanIsMeasured() throws {
        let (spans, absent) = Self.spans(try Self.timeline(losses: []))
        #expect(spans == Self.measured)
        #expect(absent.isEmpty)
    }

    @Test func aWindowBeforeASpanLeavesItMeasured() throws {
        // Hits lost between 6.2 and 6.5 ms: inside program.start, before program.init began.
        let timeline = try Self.timeline(losses: [Self.window(6_200, 6_500)])
        let (spans, absent) = Self.spans(timeline)
        #expect(spans == Self.measured(except: [LaunchPhase.programStart]))
        #expect(absent == [LaunchPhase.programStart: "its end may have been lost (3 hit(s) lost between 6.20 and 6.50 ms)"])
        #expect(timeline.metrics.timeToMainNs == 9_000_000)
    }

    @Test func aWindowInsideASpanMakesItAbsentWithTheWindow() throws {
        let timeline = try Self.timeline(losses: [Self.window(7_500, 8_000, lost: 12)])
        let (spans, absent) = Self.spans(timeline)
        #expect(spans == Self.measured(except: [LaunchPhase.programInit]))
        #expect(absent == [LaunchPhase.programInit: "its end may have been lost (12 hit(s) lost between 7.50 and 8.00 ms)"])
        // `main`'s own hit was seen: the instant and time to main stand.
        #expect(timeline.phases.contains { $0.name == LaunchPhase.main && $0.startNs == 9_000_000 })
        #expect(timeline.metrics.timeToMainNs == 9_000_000)
    }

    @Test func aWindowAfterTheSpansLeavesThemAllMeasured() throws {
        let (spans, absent) = Self.spans(try Self.timeline(losses: [Self.window(9_500, 10_000)]))
        #expect(spans == Self.measured)
        #expect(absent.isEmpty)
    }

    @Test func aWindowAcrossASpansStartAffectsBothSpansItTouches() throws {
        // 6.8 to 7.2 ms: program.start may have ended earlier, and program.init's end may be
        // in the window too.
        let (spans, absent) = Self.spans(try Self.timeline(losses: [Self.window(6_800, 7_200)]))
        #expect(spans == Self.measured(except: [LaunchPhase.programStart, LaunchPhase.programInit]))
        #expect(absent[LaunchPhase.programStart] == "its end may have been lost (3 hit(s) lost between 6.80 and 7.20 ms)")
        #expect(absent[LaunchPhase.programInit] == "its end may have been lost (3 hit(s) lost between 6.80 and 7.20 ms)")
    }

    @Test func anObjectsInitializersSayWhichObject() throws {
        let (spans, absent) = Self.spans(try Self.timeline(losses: [Self.window(5_000, 5_250, lost: 1)]))
        #expect(spans == Self.measured(except: [LaunchPhase.loaderInit]))
        #expect(absent == [LaunchPhase.loaderInit: "the initializers of /lib/libA.so: its end may have been lost (1 hit(s) lost between 5.00 and 5.25 ms)"])
    }

    @Test func windowsInsideOneSpanAreReportedTogether() throws {
        // Two windows in loader.relocate (2–4 ms), one before the spawn's ring record (from 0).
        let losses = [Self.window(2_100, 2_200, lost: 2), Self.window(3_000, 3_900, lost: 5)]
        let (spans, absent) = Self.spans(try Self.timeline(losses: losses))
        #expect(spans == Self.measured(except: [LaunchPhase.loaderRelocate]))
        #expect(absent == [LaunchPhase.loaderRelocate: "its end may have been lost (7 hit(s) lost between 2.10 and 3.90 ms)"])
    }

    @Test func aWindowFromARingsFirstRecordCoversEverySpanUpToItsEnd() throws {
        // A ring with no record before its loss: the window begins at 0 (shown from the spawn).
        let losses = [UprobeHolderProtocol.ProcessHits.LossWindow(beginNs: 0, endNs: Self.at(1_500), count: 4)]
        let (spans, absent) = Self.spans(try Self.timeline(losses: losses))
        #expect(spans == Self.measured(except: [LaunchPhase.loaderMap]))
        #expect(absent == [LaunchPhase.loaderMap: "its end may have been lost (4 hit(s) lost between 0.00 and 1.50 ms)"])
    }
}
