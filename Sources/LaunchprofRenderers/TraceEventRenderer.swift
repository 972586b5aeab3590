import LaunchprofReport

/// A report as a Chrome Trace Event JSON file for Perfetto UI and chrome://tracing.
///
/// Each run is a process track ("run 3 · pid 1234"), all starting at 0 µs (the spawn) so runs
/// line up; a last process holds the median of every phase. On a run's `launch` track: the
/// loader's phases, each library's initializers, `program.init` and the app's phases as slices,
/// `main`, `firstFrame` and `exit` as instants. App phases that overlap without nesting (which a
/// viewer cannot draw on one track) go to an `app phases (overlapping)` track. Each
/// extended-launch task has its own track; the sampler's flags and its call stack tree (laid
/// out by sample count over the launch, like a flame graph: not in time order) have theirs.
///
/// Every track is laid out in integer nanoseconds and written on a grid of 1/8 µs (125 ns; the
/// exact ns are in each slice's `startNs`/`durationNs` arguments): a multiple of 1/8 is exact in
/// binary and has at most three decimals, so Perfetto (which reads the decimal text into ns),
/// chrome://tracing and speedscope (which add `ts + dur` in doubles) all see children inside
/// their parents and a slice ending exactly where the next begins.
///
/// Nesting follows what each viewer's importer does, not only geometry: on one track slices
/// are written in order of start, longer first at a tie (Perfetto drops a slice that starts
/// inside a shorter one and outlasts it), and two slices of one name never meet at one
/// timestamp (speedscope opens the second before it closes the first); on the sampled-stacks
/// track no frame ends where another begins or where another of its stack ends. `Tests/…/TraceViewerNesting`
/// replays both importers on the traces launchprof writes.
public struct TraceEventRenderer: LaunchReportRenderer, Sendable {
    public init() {}

    static let launchTrack = 1
    /// A prewarmed run's hold (frozen → resumed) on its launch track.
    public static let holdSlice = "prewarm.hold (frozen)"
    static let flagsTrack = 200
    static let samplesTrack = 300
    static let firstTaskTrack = 100
    /// Threads other than the main one (run-time phases there), each its own track.
    static let firstThreadTrack = 400
    static let threadLaneStride = 1000

    public func document(_ report: LaunchReport) -> TraceDocument {
        var events: [TraceEvent] = []
        let facts = Self.facts(report)
        for (position, run) in report.runs.enumerated() {
            events += runEvents(run, facts: facts, pid: position + 1, sortIndex: position)
        }
        if !report.summary.phases.isEmpty {
            events += medianEvents(report.summary, pid: report.runs.count + 1)
        }
        return TraceDocument(metadata: Self.facts(report), systemTraceEvents: Self.systemTrace(report), traceEvents: events)
    }

    /// The trace as the file holds it: sorted keys, one event per line, a final newline.
    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        String(decoding: try renderBytes(report), as: UTF8.self)
    }

    /// The same, as bytes.
    public func renderBytes(_ report: LaunchReport) throws(LaunchReportError) -> [UInt8] {
        let document = document(report)
        var shell = document
        shell.traceEvents = []
        // The shell's `"traceEvents":[]` is the last key (sorted); events go in between.
        var head = try LaunchReportWriter.encodeValue(shell)
        guard head.count >= 3 else { throw .encodingFailed(reason: "empty trace document") }
        head.removeLast(2)  // "]}"
        var bytes = head
        for (offset, event) in document.traceEvents.enumerated() {
            bytes += Array((offset == 0 ? "\n" : ",\n").utf8)
            bytes += try LaunchReportWriter.encodeValue(event)
        }
        bytes += Array("\n]}\n".utf8)
        return bytes
    }

    /// What was launched: the document's `metadata`, and each run's `spawn` arguments.
    static func facts(_ report: LaunchReport) -> [String: String] {
        var facts = [
            "program": report.target.path, "runs": String(report.summary.runs),
            "generator": "launchprof", "timeOrigin": "each run's spawn (see its spawn instant for the system clocks)",
        ]
        if let buildID = report.target.buildID { facts["buildID"] = buildID }
        return facts
    }

    private func metadata(_ name: String, pid: Int, tid: Int = 0, key: String, value: TraceEvent.Argument) -> TraceEvent {
        TraceEvent(name: name, ph: "M", pid: pid, tid: tid, args: [key: value])
    }

    private func runEvents(_ run: LaunchRun, facts: [String: String], pid: Int, sortIndex: Int) -> [TraceEvent] {
        var events = [
            // Issue 22: a run that did not complete says how it ended in its track's name.
            metadata("process_name", pid: pid, key: "name", value: .text(
                "run \(run.index) · pid \(run.pid)" + (run.failed ? " · \(run.resolvedOutcome)" : ""))),
            metadata("process_sort_index", pid: pid, key: "sort_index", value: .integer(Int64(sortIndex))),
        ]
        events += trackName("launch", pid: pid, tid: Self.launchTrack)
        events.append(spawnEvent(run, facts: facts, pid: pid))
        var phases = run.phases
        if let prewarm = run.prewarm, prewarm.holdNs > 0, prewarm.resumeAtNs >= prewarm.holdNs {
            // The hold as a slice of its own, so the gap before the resume reads as the freeze.
            phases.append(
                LaunchPhase(name: Self.holdSlice, startNs: prewarm.resumeAtNs - prewarm.holdNs, durationNs: prewarm.holdNs))
        }
        events += phaseEvents(phases, pid: pid)
        if let flags = run.flags, !flags.isEmpty {
            events += flagEvents(flags, phases: run.phases, pid: pid)
        }
        if let tree = run.callStackTree {
            let roots = tree.callStacks.filter(\.threadAttributed).flatMap(\.callStackRootFrames)
            let total = roots.reduce(0) { $0 + max($1.sampleCount, 0) }
            let span = run.metrics.extendedLaunchNs ?? run.metrics.timeToFirstFrameNs
                ?? run.phases.map(\.endNs).max() ?? 0
            if total > 0, span > 0 {
                events += trackName("sampled stacks (by sample count, not time)", pid: pid, tid: Self.samplesTrack)
                // Sample positions are integers; a position's time is span × position / total, in
                // grid steps, and positions are at least `minimumPositionSteps` apart (at a very
                // high rate the track then runs past the launch: it counts samples, not time).
                let spanSteps = max(Self.gridSteps(span), UInt64(total) * Self.minimumPositionSteps)
                let at = { (position: Int) -> UInt64 in
                    UInt64(total).dividingFullWidth(spanSteps.multipliedFullWidth(by: UInt64(position))).quotient
                }
                var position = 0
                for root in roots {
                    let count = min(max(root.sampleCount, 0), total - position)
                    guard count > 0 else { break }
                    events += flame(root, first: position, count: count, at: at, depth: 0, pid: pid)
                    position += count
                }
            }
        }
        return events
    }

    /// An instant at the spawn (0) carrying what Perfetto shows nowhere else: the program, its
    /// build-id and the spawn on the system's clocks, to line the run up with a system trace.
    private func spawnEvent(_ run: LaunchRun, facts: [String: String], pid: Int) -> TraceEvent {
        var args: [String: TraceEvent.Argument] = ["program": .text(facts["program"] ?? "")]
        if let buildID = facts["buildID"] { args["buildID"] = .text(buildID) }
        if let spawnedAt = run.spawnedAt {
            args["clockMonotonicNs"] = .integer(Int64(clamping: spawnedAt.monotonicNs))
            args["clockBoottimeNs"] = .integer(Int64(clamping: spawnedAt.boottimeNs))
        }
        return TraceEvent(
            name: "spawn", cat: "instant", ph: "i", ts: 0, pid: pid, tid: Self.launchTrack, s: "t", args: args)
    }

    /// The sampler's flags, in lanes: flags that overlap without nesting (a `cpu` stretch and a
    /// `hang` around it) go to tracks of their own.
    private func flagEvents(_ flags: [LaunchFlag], phases: [LaunchPhase], pid: Int) -> [TraceEvent] {
        let placed = flags.map { flag -> (flag: LaunchFlag, start: UInt64, end: UInt64) in
            // A flag without a start is placed at the start of its phase.
            let start = flag.startNs ?? phases.first { $0.name == flag.phase }?.startNs ?? 0
            return (flag, start, start + min(flag.durationNs, UInt64.max - start))
        }.sorted { Self.writeOrder((Self.gridSteps($0.start), Self.gridSteps($0.end)), (Self.gridSteps($1.start), Self.gridSteps($1.end))) }
        let lanes = Self.lanes(placed.map { (Self.gridSteps($0.start), Self.gridSteps($0.end), Self.flagName($0.flag)) })
        var events: [TraceEvent] = []
        for lane in Set(lanes).sorted() {
            events += trackName(lane == 0 ? "flags" : "flags (overlapping)", pid: pid, tid: Self.flagsTrack + lane)
        }
        for ((flag, start, end), lane) in zip(placed, lanes) {
            var args: [String: TraceEvent.Argument] = [
                "kind": .text(flag.kind.rawValue), "phase": .text(flag.phase), "object": .text(flag.object),
                "advice": .text(flag.advice), "startNs": .integer(Int64(clamping: start)),
                "durationNs": .integer(Int64(clamping: flag.durationNs)),
            ]
            if let syscall = flag.syscall { args["syscall"] = .text(syscall) }
            if flag.startNs == nil { args["placedAt"] = .text("start of \(flag.phase)") }
            // The slice is named after the work's owner; the path shows where the time is spent.
            if let path = flag.path, path.count > 1 { args["path"] = .text(flag.chain) }
            let span = Self.span(startNs: start, endNs: end)
            events.append(
                TraceEvent(
                    name: Self.flagName(flag), cat: "flag", ph: "X", ts: span.ts, dur: span.dur,
                    pid: pid, tid: Self.flagsTrack + lane, args: args))
        }
        return events
    }

    /// A flag's slice: named after the work's owner.
    static func flagName(_ flag: LaunchFlag) -> String { "\(flag.kind.rawValue): \(flag.function)" }

    private func medianEvents(_ summary: LaunchSummary, pid: Int) -> [TraceEvent] {
        var events = [
            metadata("process_name", pid: pid, key: "name", value: .text("median of \(summary.runs) runs")),
            metadata("process_sort_index", pid: pid, key: "sort_index", value: .integer(-1)),
        ]
        events += trackName("launch", pid: pid, tid: Self.launchTrack)
        let medians = summary.phases.map { phase in
            LaunchPhase(
                name: phase.name, startNs: phase.startNs.median, durationNs: phase.durationNs.median,
                object: phase.object, task: phase.task, image: phase.image)
        }
        return events + phaseEvents(medians, pid: pid)
    }

    /// The phases of one process: each extended-launch task on a track of its own (named at its
    /// first phase), the phases of another thread than the main one (a dlopen there) on that
    /// thread's track, the launch's phases laid out on the launch track.
    private func phaseEvents(_ phases: [LaunchPhase], pid: Int) -> [TraceEvent] {
        var events: [TraceEvent] = []
        var launchPhases: [LaunchPhase] = []
        var taskTracks: [String: Int] = [:]
        var threadPhases: [Int32: [LaunchPhase]] = [:]
        for phase in phases {
            if let thread = phase.thread {
                threadPhases[thread, default: []].append(phase)
            } else if phase.name == LaunchPhase.extendedLaunch {
                let task = phase.task ?? "task"
                let tid = taskTracks[task] ?? (Self.firstTaskTrack + taskTracks.count)
                if taskTracks[task] == nil {
                    taskTracks[task] = tid
                    events += trackName("extendedLaunch \(task)", pid: pid, tid: tid)
                }
                events.append(slice(phase, pid: pid, tid: tid))
            } else {
                launchPhases.append(phase)
            }
        }
        for (index, (thread, phases)) in threadPhases.sorted(by: { $0.key < $1.key }).enumerated() {
            let tid = Self.firstThreadTrack + index
            events += trackName("thread \(thread)", pid: pid, tid: tid)
            // A thread's phases nest (a dlopen's steps inside it); any that do not, go on.
            for (phase, lane) in zip(phases, Self.lanes(phases.map { ($0.startNs, $0.endNs) })) {
                events.append(slice(phase, pid: pid, tid: tid + lane * Self.threadLaneStride))
            }
        }
        return events + laidOut(launchPhases, pid: pid)
    }

    private func trackName(_ name: String, pid: Int, tid: Int) -> [TraceEvent] {
        [
            metadata("thread_name", pid: pid, tid: tid, key: "name", value: .text(name)),
            metadata("thread_sort_index", pid: pid, tid: tid, key: "sort_index", value: .integer(Int64(tid))),
        ]
    }

    /// Instants, and slices on the launch track or, when they would overlap without nesting,
    /// on extra tracks.
    private func laidOut(_ phases: [LaunchPhase], pid: Int) -> [TraceEvent] {
        var events: [TraceEvent] = []
        let spans = phases.filter { $0.durationNs > 0 }.sorted {
            Self.writeOrder((Self.gridSteps($0.startNs), Self.gridSteps($0.endNs)), (Self.gridSteps($1.startNs), Self.gridSteps($1.endNs)))
        }
        let lanes = Self.lanes(spans.map { (Self.gridSteps($0.startNs), Self.gridSteps($0.endNs), PhaseStyle.label($0)) })
        for lane in Set(lanes).sorted() where lane > 0 {
            events += trackName("app phases (overlapping)", pid: pid, tid: Self.launchTrack + lane)
        }
        for (phase, lane) in zip(spans, lanes) {
            events.append(slice(phase, pid: pid, tid: Self.launchTrack + lane))
        }
        for phase in phases where phase.durationNs == 0 {
            events.append(
                TraceEvent(
                    name: PhaseStyle.label(phase), cat: "instant", ph: "i", ts: Self.micros(phase.startNs), pid: pid,
                    tid: Self.launchTrack, s: "t", args: Self.arguments(phase)))
        }
        return events
    }

    /// The order slices are written in on a track: by start, the longer first at a tie (both
    /// on the grid, as the viewers read them), so a viewer that reads them in file order opens a
    /// parent before its child.
    static func writeOrder(_ a: (start: UInt64, end: UInt64), _ b: (start: UInt64, end: UInt64)) -> Bool {
        a.start != b.start ? a.start < b.start : a.end > b.end
    }

    /// A lane per span such that spans on one lane nest or follow each other (what a viewer can
    /// draw on one track), and two spans of one name never meet at one time (speedscope would
    /// nest the second in the first): the first lane that fits, in order of start (longer first
    /// on ties). Times in whatever unit the trace is written in (grid steps).
    public static func lanes(_ spans: [(start: UInt64, end: UInt64, name: String)]) -> [Int] {
        let order = spans.indices.sorted { writeOrder((spans[$0].start, spans[$0].end), (spans[$1].start, spans[$1].end)) }
        var stacks: [[(end: UInt64, name: String)]] = []
        /// Per lane, the names of the spans that ended at each time.
        var endedAt: [[UInt64: Set<String>]] = []
        var result = [Int](repeating: 0, count: spans.count)
        for index in order {
            let span = spans[index]
            var placed = false
            for lane in stacks.indices {
                while let top = stacks[lane].last, top.end <= span.start {
                    endedAt[lane][top.end, default: []].insert(top.name)
                    stacks[lane].removeLast()
                }
                let meetsItsName = endedAt[lane][span.start]?.contains(span.name) == true
                if !meetsItsName, stacks[lane].last.map({ $0.end >= span.end }) ?? true {
                    stacks[lane].append((span.end, span.name))
                    result[index] = lane
                    placed = true
                    break
                }
            }
            if !placed {
                stacks.append([(span.end, span.name)])
                endedAt.append([:])
                result[index] = stacks.count - 1
            }
        }
        return result
    }

    /// `lanes` for unnamed spans: nesting alone decides.
    public static func lanes(_ spans: [(start: UInt64, end: UInt64)]) -> [Int] {
        lanes(spans.enumerated().map { ($0.element.start, $0.element.end, "\($0.offset)") })
    }

    private func slice(_ phase: LaunchPhase, pid: Int, tid: Int) -> TraceEvent {
        let span = Self.span(startNs: phase.startNs, endNs: phase.endNs)
        return TraceEvent(
            name: PhaseStyle.label(phase), cat: PhaseStyle.category(phase.name).rawValue, ph: "X", ts: span.ts, dur: span.dur, pid: pid,
            tid: tid, args: Self.arguments(phase))
    }

    /// Sample positions on the stack track are at least this many grid steps apart, so that
    /// every depth's frame can end a step of its own before the next position.
    static let minimumPositionSteps = UInt64(2 * (CallStackTree.maximumDepth + 1))

    /// A frame over sample positions `first ..< first + count` (`at` gives a position's grid
    /// step), its callees after each other from `first`, each capped to what is left of its
    /// parent (rounded counts can add up to more than the parent's).
    ///
    /// A frame at depth d ends d + 1 grid steps short of its last position: no frame ends where
    /// another begins, and no two frames of one stack end at one time. Otherwise speedscope,
    /// which pairs ends with open frames by name at a tie, mis-nests recursion
    /// (`execute_command_internal → execute_command → execute_command_internal`) and a stack cut
    /// short at `main` beside a whole one.
    private func flame(
        _ frame: CallStackTree.Frame, first: Int, count: Int, at: (Int) -> UInt64, depth: Int, pid: Int
    ) -> [TraceEvent] {
        guard depth < CallStackTree.maximumDepth else { return [] }
        let name = frame.symbol ?? "\(frame.binaryName)+0x\(String(frame.offsetIntoBinaryTextSegment, radix: 16))"
        let start = at(first)
        let end = max(at(first + count) - min(UInt64(depth + 1), at(first + count)), start + 1)
        var events = [
            TraceEvent(
                name: name, cat: "samples", ph: "X", ts: Double(start) / 8, dur: Double(end - start) / 8, pid: pid,
                tid: Self.samplesTrack,
                args: ["samples": .integer(Int64(frame.sampleCount)), "binary": .text(frame.binaryName)])
        ]
        var childFirst = first
        for child in frame.subFrames ?? [] {
            let childCount = min(max(child.sampleCount, 0), first + count - childFirst)
            guard childCount > 0 else { break }
            events += flame(child, first: childFirst, count: childCount, at: at, depth: depth + 1, pid: pid)
            childFirst += childCount
        }
        return events
    }

    static func arguments(_ phase: LaunchPhase) -> [String: TraceEvent.Argument] {
        var args: [String: TraceEvent.Argument] = [
            "startNs": .integer(Int64(clamping: phase.startNs)), "durationNs": .integer(Int64(clamping: phase.durationNs)),
        ]
        if let object = phase.object { args["object"] = .text(object) }
        if let task = phase.task { args["task"] = .text(task) }
        if let image = phase.image { args["image"] = .integer(Int64(image)) }
        if let source = phase.source { args["source"] = .text(source) }
        if let caller = phase.caller { args["caller"] = .text(caller) }
        if let thread = phase.thread { args["thread"] = .integer(Int64(thread)) }
        return args
    }

    /// The trace's time grid, in ns: 1/8 µs, the finest binary fraction of a µs with at most
    /// three decimals.
    public static let gridNs: UInt64 = 125

    /// `ns` in grid steps, rounded to the nearest (monotone, so nesting survives).
    static func gridSteps(_ ns: UInt64) -> UInt64 { ns / gridNs + (ns % gridNs >= (gridNs + 1) / 2 ? 1 : 0) }

    /// ns → µs on the grid: exact in binary, at most three decimals.
    public static func micros(_ ns: UInt64) -> Double { Double(gridSteps(ns)) / 8 }

    /// A slice's `ts` and `dur` from its start and end in ns: both on the grid, so `ts + dur`
    /// is exactly the end's `micros` in any viewer's arithmetic.
    public static func span(startNs: UInt64, endNs: UInt64) -> (ts: Double, dur: Double) {
        let start = gridSteps(startNs)
        let end = max(gridSteps(endNs), start)
        return (Double(start) / 8, Double(end - start) / 8)
    }
}
