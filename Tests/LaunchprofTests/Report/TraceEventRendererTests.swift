import Foundation
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// The Chrome trace from constructed runs: tracks, slices, instants, nesting, flags, samples.
@Suite("Trace events")
struct TraceEventRendererTests {
    /// How a viewer turns a slice's `ts` and `dur` into its start and end.
    enum Viewer: CaseIterable {
        /// Perfetto's JSON tokenizer: the number's decimal text with the point moved three places,
        /// extra digits cut off (`CoerceToTs` on the raw string), end = ts + dur in int64 ns.
        case perfettoText
        /// Perfetto's older parser and most tools: `llround(value * 1000)` ns.
        case perfettoRounded
        /// speedscope and chrome://tracing: µs doubles, end = ts + dur in double arithmetic.
        case speedscope
    }

    /// Perfetto's reading of a JSON number (µs) as ns: shift the decimal point by three digits
    /// in the text and truncate.
    static func perfettoNs(_ text: String) -> Int64? {
        var mantissa = text
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...]) ?? 0
            mantissa = String(text[..<e])
        }
        var digits = mantissa
        var integerDigits = digits.count
        if let point = mantissa.firstIndex(of: ".") {
            integerDigits = mantissa.distance(from: mantissa.startIndex, to: point)
            digits.remove(at: point)
        }
        let size = max(1, integerDigits + exponent + 3)
        if digits.count < size { digits += String(repeating: "0", count: size - digits.count) }
        return Int64(digits.prefix(size))
    }

    /// Every slice of the trace (pid/tid → start, end, name) as `viewer` computes it, from the
    /// file's text (one event per line).
    static func slices(_ bytes: [UInt8], viewer: Viewer) -> [String: [(start: Double, end: Double, name: String)]] {
        var tracks: [String: [(start: Double, end: Double, name: String)]] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.contains("\"ph\":\"X\"") {
            func number(_ key: String) -> String? {
                guard let found = line.range(of: "\"\(key)\":") else { return nil }
                let text = line[found.upperBound...].prefix { "0123456789.eE+-".contains($0) }
                return text.isEmpty ? nil : String(text)
            }
            // The name: from `"name":"` to the first quote no backslash escapes (no Regex: a
            // trace of thousands of lines is read three times).
            func name() -> Substring? {
                guard let found = line.range(of: #""name":""#) else { return nil }
                var escaped = false
                let rest = line[found.upperBound...]
                guard let end = rest.firstIndex(where: { character in
                    defer { escaped = !escaped && character == "\\" }
                    return character == "\"" && !escaped
                }) else { return nil }
                return rest[..<end]
            }
            guard let ts = number("ts"), let dur = number("dur"), let pid = number("pid"), let tid = number("tid"),
                let name = name()
            else {
                Issue.record("unreadable slice: \(line)")
                continue
            }
            let start: Double
            let end: Double
            switch viewer {
            case .perfettoText:
                let a = perfettoNs(ts) ?? -1, b = perfettoNs(dur) ?? -1
                (start, end) = (Double(a), Double(a + b))
            case .perfettoRounded:
                let a = (Double(ts) ?? -1) * 1000, b = (Double(dur) ?? -1) * 1000
                (start, end) = (a.rounded(), a.rounded() + b.rounded())
            case .speedscope:
                let a = Double(ts) ?? -1, b = Double(dur) ?? -1
                (start, end) = (a, a + b)
            }
            tracks["\(pid)/\(tid)", default: []].append((start, end, String(name)))
        }
        return tracks
    }

    /// Checks what Perfetto, chrome://tracing and speedscope need of a trace file beyond its
    /// schema: under each viewer's own arithmetic, slices on one track nest or follow each other
    /// exactly (no tolerance), and every track and process is named. Returns the decoded document.
    static func expectWellFormed(
        _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> TraceDocument {
        try SchemaValidator.expectValid(bytes, against: .trace, "trace", sourceLocation: sourceLocation)
        // Each slice where speedscope's importer and Perfetto's slice tracker put it.
        try TraceViewerNesting.expectNested(bytes, "trace", sourceLocation: sourceLocation)
        let document = try JSONDecoder().decode(TraceDocument.self, from: Data(bytes))
        var named = Set<String>()
        var processes = Set<Int>()
        for event in document.traceEvents where event.ph == "M" {
            if event.name == "thread_name" { named.insert("\(event.pid)/\(event.tid)") }
            if event.name == "process_name" { processes.insert(event.pid) }
        }
        let sliceCount = document.traceEvents.filter { $0.ph == "X" }.count
        for viewer in Viewer.allCases {
            let tracks = slices(bytes, viewer: viewer)
            #expect(tracks.values.reduce(0) { $0 + $1.count } == sliceCount, "\(viewer): every slice read", sourceLocation: sourceLocation)
            for (track, slices) in tracks {
                #expect(named.contains(track), "track \(track) has a name", sourceLocation: sourceLocation)
                #expect(processes.contains(Int(track.split(separator: "/")[0]) ?? -1), sourceLocation: sourceLocation)
                // Sorted by start (longer first), every slice must end within the enclosing one.
                var open: [(end: Double, name: String)] = []
                for slice in slices.sorted(by: { $0.start != $1.start ? $0.start < $1.start : $0.end > $1.end }) {
                    #expect(slice.end >= slice.start, sourceLocation: sourceLocation)
                    while let top = open.last, top.end <= slice.start { open.removeLast() }
                    if let top = open.last {
                        #expect(
                            slice.end <= top.end, "\(viewer) \(track): \(slice.name) overlaps \(top.name) without nesting",
                            sourceLocation: sourceLocation)
                    }
                    open.append((slice.end, slice.name))
                }
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
                let label = PhaseStyle.label(phase)
                let event = mine.first { $0.name == label && $0.ph == (phase.durationNs == 0 ? "i" : "X") }
                let found = try #require(event, "run \(position): \(label)")
                // On the 1/8 µs grid, within half a step of the ns.
                #expect(abs((found.ts ?? -1) * 1_000 - Double(phase.startNs)) <= 62.5)
                if phase.durationNs > 0 {
                    #expect(abs(((found.ts ?? 0) + (found.dur ?? 0)) * 1_000 - Double(phase.endNs)) <= 62.5)
                }
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
        // A frame at depth d ends d + 1 grid steps (of 0.125 µs) short of its last position.
        #expect(abs((samples[0].dur ?? 0) + 0.125 - span) <= 0.0625)
        #expect(abs((samples[1].dur ?? 0) + 0.25 - span / 2) <= 0.125)

        // The median process holds every distinct phase of the summary.
        let median = events.filter { $0.pid == 3 && ($0.ph == "X" || $0.ph == "i") }
        #expect(median.count == report.summary.phases.count)
        #expect(document.metadata["program"] == "/opt/demo/app")
        #expect(document.metadata["buildID"] == "0123456789abcdef")
    }

    /// Runs whose every boundary is an awkward ns (not a multiple of 1 µs, nor of 125 ns):
    /// back-to-back phases, an exec chain, a prewarmed launch, overlapping flags, and a sampled
    /// tree whose children's counts add up to more than their parent's.
    static func awkwardRuns() -> [LaunchRun] {
        var runs: [LaunchRun] = []
        for index in 0..<3 {
            let base = UInt64(index) * 7_919 + 1_234_567
            var phases: [LaunchPhase] = [.init(name: "exec", startNs: 0, durationNs: 123_457)]
            var at: UInt64 = 123_457
            // Two images of an exec chain (a shell script exec'ing the program), each with its loader phases.
            for image in 0..<2 {
                for (name, length) in [("loader.map", base / 7), ("loader.relocate", base / 11), ("program.init", base / 13)] {
                    phases.append(.init(name: name, startNs: at, durationNs: length, image: image))
                    at += length
                }
                for library in 0..<5 {
                    let length = base / UInt64(17 + library) + 1
                    phases.append(.init(name: "loader.init", startNs: at, durationNs: length, object: "/lib/lib\(library).so", image: image))
                    at += length
                }
                if image == 0 { phases.append(.init(name: "exec", startNs: at, durationNs: 99_999, image: 1)); at += 99_999 }
            }
            phases.append(.init(name: "main", startNs: at, durationNs: 0))
            let didFinish = LaunchPhase(name: "didFinishLaunching", startNs: at + 333, durationNs: 10_000_001)
            phases.append(didFinish)
            phases.append(.init(name: "parse", startNs: didFinish.startNs + 1_001, durationNs: 4_999_999))
            let frame = didFinish.endNs + 77
            phases.append(.init(name: "firstFrame", startNs: frame, durationNs: 0))
            var run = LaunchRun(
                index: index, pid: 4_000 + Int32(index), exitStatus: RunExit(code: 0), phases: phases,
                metrics: LaunchMetrics(timeToMainNs: at, timeToFirstFrameNs: frame, extendedLaunchNs: frame, exitNs: frame + 1))
            // A cpu stretch that a hang straddles: they overlap without nesting.
            run.flags = [
                LaunchFlag(kind: .cpu, phase: "didFinishLaunching", function: "crunch", object: "app", durationNs: 6_000_003,
                           startNs: didFinish.startNs + 11, advice: "defer it"),
                LaunchFlag(kind: .hang, phase: "didFinishLaunching", function: "crunch", object: "app", durationNs: 260_000_001,
                           startNs: didFinish.startNs + 3_000_017, advice: "move it off the main thread"),
                LaunchFlag(kind: .blocked, phase: "didFinishLaunching", function: "read", object: "app", durationNs: 1_000_009,
                           syscall: "read", advice: "read it later"),
            ]
            func node(_ name: String, _ count: Int, _ children: [CallStackTree.Frame] = []) -> CallStackTree.Frame {
                CallStackTree.Frame(
                    binaryName: "app", buildID: "ab", address: 0x1000, offsetIntoBinaryTextSegment: 0x10, sampleCount: count,
                    symbol: name, subFrames: children.isEmpty ? nil : children)
            }
            // 7 samples at the root, children rounded to 4 + 4 (over the parent's 7), a grandchild of 5 under a 4.
            run.callStackTree = CallStackTree(callStacks: [
                .init(threadAttributed: true, callStackRootFrames: [
                    node("main", 7, [node("parse", 4, [node("crunch", 5)]), node("draw", 4)]),
                    node("idle", 3),
                ]),
                .init(threadAttributed: false, callStackRootFrames: [node("worker", 2)]),
            ])
            if index == 2 {
                var prewarm = PrewarmRun(freezeAt: "main", prewarmNs: at, holdNs: 500_000_003, resumeAtNs: at + 500_000_003)
                prewarm.ordinaryTimeToFirstFrameNs = frame + 12_345
                run.prewarm = prewarm
                run.metrics.optimizedTimeToFirstFrameNs = frame - at
            }
            run.spawnedAt = SpawnInstant(monotonicNs: 9_876_543_210_123 + UInt64(index), boottimeNs: 9_999_543_210_123 + UInt64(index))
            runs.append(run)
        }
        return runs
    }

    @Test("every track nests the way Perfetto and speedscope compute it: sampling, flags, exec chains, prewarm")
    func viewersNest() throws {
        let report = ExportSamples.report(Self.awkwardRuns())
        let bytes = try TraceEventRenderer().renderBytes(report)
        let document = try Self.expectWellFormed(bytes)
        // The grid: every ts and dur is a multiple of 1/8 µs, written with at most three decimals.
        for event in document.traceEvents where event.ph != "M" {
            for value in [event.ts, event.dur].compactMap({ $0 }) { #expect((value * 8).rounded() == value * 8, "\(event.name)") }
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            #expect(line.firstMatch(of: /"(ts|dur)":[0-9]+\.[0-9]{4}/) == nil, "at most three decimals: \(line)")
        }
        // The prewarmed run's hold is a slice of its own, from the freeze to the resume.
        let prewarm = try #require(report.runs[2].prewarm)
        let hold = try #require(document.traceEvents.first { $0.pid == 3 && $0.name == TraceEventRenderer.holdSlice })
        #expect(hold.ts == TraceEventRenderer.micros(prewarm.resumeAtNs - prewarm.holdNs))
        #expect((hold.ts ?? 0) + (hold.dur ?? 0) == TraceEventRenderer.micros(prewarm.resumeAtNs))
        #expect(!document.traceEvents.contains { $0.pid == 1 && $0.name == TraceEventRenderer.holdSlice })
        // Adjacent phases meet exactly in every viewer: the end of one is the start of the next.
        for viewer in Viewer.allCases {
            let launch = try #require(Self.slices(bytes, viewer: viewer)["1/1"])
            let byName = launch.filter { $0.name.hasPrefix("[0] loader.") || $0.name.hasPrefix("[0] program.") }
                .sorted { $0.start < $1.start }
            #expect(byName.count == 8)
            for (a, b) in zip(byName, byName.dropFirst()) { #expect(a.end == b.start, "\(viewer): \(a.name) → \(b.name)") }
        }
    }

    @Test("stack track: sample positions in integers, each node capped to its parent")
    func samplesCapped() throws {
        let runs = Self.awkwardRuns()
        let document = try Self.expectWellFormed(try TraceEventRenderer().renderBytes(ExportSamples.report(runs)))
        let samples = document.traceEvents.filter { $0.pid == 1 && $0.tid == 300 && $0.ph == "X" }
        #expect(samples.map(\.name) == ["main", "parse", "crunch", "draw", "idle"], "the unattributed thread is left out")
        let span = TraceEventRenderer.micros(try #require(runs[0].metrics.extendedLaunchNs))
        func slice(_ name: String) throws -> (start: Double, end: Double) {
            let event = try #require(samples.first { $0.name == name })
            return ((event.ts ?? -1), (event.ts ?? -1) + (event.dur ?? -1))
        }
        // 10 positions over the span (in grid steps of 1/8 µs): main 0–7, parse 0–4, crunch 0–4
        // (capped from 5), draw 4–7 (capped from 4), idle 7–10; a frame at depth d ends d + 1
        // steps short, so no frame ends where another begins or where another of its stack ends.
        let expected: [(String, Int, Int, Double)] = [
            ("main", 0, 7, 0), ("parse", 0, 4, 1), ("crunch", 0, 4, 2), ("draw", 4, 7, 1), ("idle", 7, 10, 0),
        ]
        let steps = span * 8
        for (name, first, last, depth) in expected {
            let got = try slice(name)
            #expect(got.start == (steps * Double(first) / 10).rounded(.down) / 8, "\(name) start")
            #expect(got.end == ((steps * Double(last) / 10).rounded(.down) - depth - 1) / 8, "\(name) end")
        }
        #expect(try slice("idle").end == span - 0.125)
        // The recorded counts stay in the args.
        #expect(samples.first { $0.name == "crunch" }?.args?["samples"] == .integer(5))
    }

    @Test("flags in lanes: a cpu stretch and the hang across it on separate tracks")
    func flagLanes() throws {
        let document = try Self.expectWellFormed(try TraceEventRenderer().renderBytes(ExportSamples.report(Self.awkwardRuns())))
        let flags = document.traceEvents.filter { $0.pid == 1 && $0.cat == "flag" }
        #expect(flags.count == 3)
        let cpu = try #require(flags.first { $0.name == "cpu: crunch" })
        let hang = try #require(flags.first { $0.name == "hang: crunch" })
        #expect(cpu.tid != hang.tid)
        #expect(Set(flags.map(\.tid)).isSubset(of: 200..<300))
        let laneNames = document.traceEvents.filter { $0.pid == 1 && $0.name == "thread_name" && (200..<300).contains($0.tid) }
        #expect(laneNames.count == Set(flags.map(\.tid)).count)
    }

    @Test("each run's spawn on the system clocks, the program and build-id where Perfetto shows them")
    func spawnClocks() throws {
        let runs = Self.awkwardRuns()
        let document = try Self.expectWellFormed(try TraceEventRenderer().renderBytes(ExportSamples.report(runs)))
        for (position, run) in runs.enumerated() {
            let spawn = try #require(document.traceEvents.first { $0.pid == position + 1 && $0.name == "spawn" })
            #expect(spawn.ts == 0 && spawn.ph == "i" && spawn.tid == 1)
            #expect(spawn.args?["clockMonotonicNs"] == .integer(Int64(run.spawnedAt?.monotonicNs ?? 0)))
            #expect(spawn.args?["clockBoottimeNs"] == .integer(Int64(run.spawnedAt?.boottimeNs ?? 0)))
            #expect(spawn.args?["program"] == .text("/opt/demo/app"))
            #expect(spawn.args?["buildID"] == .text("0123456789abcdef"))
        }
        #expect(document.metadata["program"] == "/opt/demo/app" && document.metadata["buildID"] == "0123456789abcdef")
    }

    @Test("Perfetto's decimal reading")
    func perfettoReading() {
        #expect(Self.perfettoNs("1234.567") == 1_234_567)
        #expect(Self.perfettoNs("1234.5669999") == 1_234_566, "truncates, as Perfetto does")
        #expect(Self.perfettoNs("0.125") == 125)
        #expect(Self.perfettoNs("12") == 12_000)
        #expect(Self.perfettoNs("1.5e3") == 1_500_000)
    }

    @Test("lanes: nested spans share one, overlapping ones do not, nor two of one name that meet")
    func lanes() {
        #expect(TraceEventRenderer.lanes([(0, 10), (2, 5), (5, 9), (10, 12)]) == [0, 0, 0, 0])
        #expect(TraceEventRenderer.lanes([(0, 10), (5, 15), (12, 20)]) == [0, 1, 0])
        #expect(TraceEventRenderer.lanes([(0, 5, "render"), (5, 9, "render"), (9, 12, "draw")]) == [0, 1, 0])
        #expect(TraceEventRenderer.lanes([(0, 5, "render"), (6, 9, "render")]) == [0, 0], "apart, they share a lane")
    }

    /// What made speedscope mis-nest real traces: a recursive stack (bash's
    /// execute_command_internal → execute_command → execute_command_internal), a stack cut short
    /// at `main` beside a whole one (`_start → … → main`), app phases of one name back to back,
    /// flags of one function in two phases that meet, phases that start together.
    @Test("recursion, cut-short stacks and repeated names nest in speedscope and Perfetto")
    func repeatedNamesNest() throws {
        var runs = Self.awkwardRuns()
        func node(_ name: String, _ count: Int, _ children: [CallStackTree.Frame] = []) -> CallStackTree.Frame {
            CallStackTree.Frame(
                binaryName: "bash", buildID: "", address: 0x1000, offsetIntoBinaryTextSegment: 0x10, sampleCount: count,
                symbol: name, subFrames: children.isEmpty ? nil : children)
        }
        // The last callee chain ends where its callers do, with the same names and counts
        // repeated down the stack (Python's evaluator calling itself).
        let recursion = node("execute_command_internal", 6, [
            node("execute_command", 4, [node("execute_command_internal", 4, [node("execute_command", 2), node("make_child", 2)])]),
            node("execute_command", 2, [node("execute_command_internal", 2, [node("execute_command", 2, [node("execute_command_internal", 2)])])]),
        ])
        runs[0].callStackTree = CallStackTree(callStacks: [
            .init(threadAttributed: true, callStackRootFrames: [
                node("_start", 9, [node("main", 9, [recursion, node("main", 3)])]),
                node("main", 5, [node("main", 2)]),
            ]),
        ])
        let frame = try #require(runs[0].metrics.timeToFirstFrameNs)
        runs[0].phases += [
            .init(name: "render", startNs: frame + 100, durationNs: 1_000), .init(name: "render", startNs: frame + 1_100, durationNs: 1_000),
            .init(name: "render", startNs: frame + 2_100, durationNs: 0),
            .init(name: "layout", startNs: frame + 100, durationNs: 500), .init(name: "layout", startNs: frame + 100, durationNs: 2_000),
        ]
        let start = try #require(runs[0].flags?.first?.startNs)
        runs[0].flags? += [
            LaunchFlag(kind: .cpu, phase: "willFinishLaunching", function: "load", object: "app", durationNs: 2_000_000, startNs: start + 20_000_000, advice: "a"),
            LaunchFlag(kind: .cpu, phase: "didFinishLaunching", function: "load", object: "app", durationNs: 1_000_000, startNs: start + 22_000_000, advice: "b"),
        ]
        let bytes = try TraceEventRenderer().renderBytes(ExportSamples.report(runs))
        _ = try Self.expectWellFormed(bytes)
    }

    /// The nesting check can fail: two slices of one name that meet, as speedscope reads them,
    /// and a slice outlasting the one it starts in, as Perfetto reads it.
    @Test("the viewers' nesting check finds what each viewer gets wrong")
    func nestingCheckFails() throws {
        func trace(_ slices: [(String, Double, Double)]) -> [UInt8] {
            let events = slices.map { #"{"name":"\#($0.0)","ph":"X","pid":1,"tid":1,"ts":\#($0.1),"dur":\#($0.2)}"# }
            return Array(#"{"traceEvents":[\#(events.joined(separator: ","))]}"#.utf8)
        }
        let meeting = try TraceViewerNesting.problems(trace([("outer", 0, 20), ("A", 0, 5), ("A", 5, 5)]))
        #expect(meeting.contains { $0.viewer == "speedscope" }, "\(meeting)")
        #expect(!meeting.contains { $0.viewer == "Perfetto" })
        let crossing = try TraceViewerNesting.problems(trace([("A", 0, 5), ("B", 3, 5)]))
        #expect(crossing.contains { $0.viewer == "Perfetto" }, "\(crossing)")
        let shorterFirst = try TraceViewerNesting.problems(trace([("child", 0, 2), ("parent", 0, 5)]))
        #expect(shorterFirst.contains { $0.viewer == "Perfetto" }, "Perfetto reads a tie in file order: \(shorterFirst)")
        #expect(try TraceViewerNesting.problems(trace([("parent", 0, 5), ("child", 0, 2), ("B", 5, 1)])).isEmpty)
    }
}
