import Foundation
import LaunchprofReport
import Testing

/// The Chrome trace from constructed runs: tracks, slices, instants, nesting, flags, samples.
@Suite("Trace events")
struct TraceEventRendererTests {
    /// Checks what Perfetto and chrome://tracing need of a trace file beyond its schema: slices on
    /// one track nest or follow each other, and every track and process is named. Returns the
    /// decoded document.
    static func expectWellFormed(
        _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> TraceDocument {
        try SchemaValidator.expectValid(bytes, against: .trace, "trace", sourceLocation: sourceLocation)
        let document = try JSONDecoder().decode(TraceDocument.self, from: Data(bytes))
        var tracks: [String: [(start: Double, end: Double, name: String)]] = [:]
        var named = Set<String>()
        var processes = Set<Int>()
        for event in document.traceEvents {
            switch event.ph {
            case "X":
                let start = event.ts ?? 0
                tracks["\(event.pid)/\(event.tid)", default: []].append((start, start + (event.dur ?? 0), event.name))
            case "M":
                if event.name == "thread_name" { named.insert("\(event.pid)/\(event.tid)") }
                if event.name == "process_name" { processes.insert(event.pid) }
            default: break
            }
        }
        for (track, slices) in tracks {
            #expect(named.contains(track), "track \(track) has a name", sourceLocation: sourceLocation)
            #expect(processes.contains(Int(track.split(separator: "/")[0]) ?? -1), sourceLocation: sourceLocation)
            // Sorted by start (longer first), every slice must end within the enclosing one.
            var open: [(end: Double, name: String)] = []
            let epsilon = 1e-6
            for slice in slices.sorted(by: { $0.start != $1.start ? $0.start < $1.start : $0.end > $1.end }) {
                while let top = open.last, top.end <= slice.start + epsilon { open.removeLast() }
                if let top = open.last {
                    #expect(
                        slice.end <= top.end + epsilon, "\(track): \(slice.name) overlaps \(top.name) without nesting",
                        sourceLocation: sourceLocation)
                }
                open.append((slice.end, slice.name))
            }
        }
        return document
    }

    @Test("a track per run and the median; every phase, instant, task, flag and sample")
    func tracks() throws {
        let runs = [
            ExportSamples.run(index: 0, firstFrameMs: 14, overlapping: true),
            ExportSamples.run(index: 1, firstFrameMs: 19, hangsMs: [260], sampled: true),
        ]
        let report = ExportSamples.report(runs)
        let document = try Self.expectWellFormed(try TraceEventRenderer().renderBytes(report))
        let events = document.traceEvents
        let processNames = events.filter { $0.name == "process_name" }.compactMap { event -> String? in
            if case .text(let name) = event.args?["name"] { return name }
            return nil
        }
        #expect(processNames == ["run 0 · pid 1000", "run 1 · pid 1001", "median of 2 runs"])

        for (position, run) in runs.enumerated() {
            let pid = position + 1
            let mine = events.filter { $0.pid == pid }
            for phase in run.phases {
                let label = TraceEventRenderer.label(phase)
                let event = mine.first { $0.name == label && $0.ph == (phase.durationNs == 0 ? "i" : "X") }
                let found = try #require(event, "run \(position): \(label)")
                #expect(found.ts == Double(phase.startNs) / 1_000)
                if phase.durationNs > 0 { #expect(found.dur == Double(phase.durationNs) / 1_000) }
                // Extended tasks on their own tracks; everything else on the launch track or its overflow.
                if phase.name == "extendedLaunch" {
                    #expect(found.tid >= 100 && found.tid < 200)
                } else if phase.durationNs == 0 {
                    #expect(found.tid == 1)
                }
            }
            let taskTracks = Set(mine.filter { $0.cat == "extendedLaunch" }.map(\.tid))
            #expect(taskTracks.count == 2, "one track per task")
        }
        // The overlapping app phases of run 0 cannot share a track.
        let loadA = try #require(events.first { $0.pid == 1 && $0.name == "loadA" })
        let loadB = try #require(events.first { $0.pid == 1 && $0.name == "loadB" })
        #expect(loadA.tid != loadB.tid)
        #expect(events.first { $0.pid == 1 && $0.name == "loader.init libc.so.6" }?.tid == 1)

        // Run 1's hang and its samples (6 samples laid over the extended launch).
        let flag = try #require(events.first { $0.pid == 2 && $0.cat == "flag" })
        #expect(flag.name == "hang: syncDatabase")
        #expect(flag.dur == 260_000)
        let samples = events.filter { $0.pid == 2 && $0.cat == "samples" }
        #expect(samples.map(\.name) == ["main", "parse", "read", "app+0x4000"])
        let span = Double(try #require(runs[1].metrics.extendedLaunchNs)) / 1_000
        #expect(abs((samples[0].dur ?? 0) - span) < 1e-6)
        #expect(abs((samples[1].dur ?? 0) - span / 2) < 1e-6)

        // The median process holds every distinct phase of the summary.
        let median = events.filter { $0.pid == 3 && ($0.ph == "X" || $0.ph == "i") }
        #expect(median.count == report.summary.phases.count)
    }

    @Test("lanes: nested spans share one, overlapping ones do not")
    func lanes() {
        #expect(TraceEventRenderer.lanes([(0, 10), (2, 5), (5, 9), (10, 12)]) == [0, 0, 0, 0])
        #expect(TraceEventRenderer.lanes([(0, 10), (5, 15), (12, 20)]) == [0, 1, 0])
    }
}
