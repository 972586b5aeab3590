/// A report as a Chrome Trace Event JSON file for Perfetto UI and chrome://tracing.
///
/// Each run is a process track ("run 3 · pid 1234"), all starting at 0 µs (the spawn) so runs
/// line up; a last process holds the median of every phase. On a run's `launch` track: the
/// loader's phases, each library's initializers, `program.init` and the app's phases as slices,
/// `main`, `firstFrame` and `exit` as instants. App phases that overlap without nesting (which a
/// viewer cannot draw on one track) go to an `app phases (overlapping)` track. Each
/// extended-launch task has its own track; the sampler's flags and its call stack tree (laid
/// out by sample count over the launch, like a flame graph: not in time order) have theirs.
public struct TraceEventRenderer: LaunchReportRenderer, Sendable {
    public init() {}

    static let launchTrack = 1
    static let flagsTrack = 200
    static let samplesTrack = 300
    static let firstTaskTrack = 100

    public func document(_ report: LaunchReport) -> TraceDocument {
        var events: [TraceEvent] = []
        for (position, run) in report.runs.enumerated() {
            events += runEvents(run, pid: position + 1, sortIndex: position)
        }
        if !report.summary.phases.isEmpty {
            events += medianEvents(report.summary, pid: report.runs.count + 1)
        }
        var otherData = [
            "program": report.target.path, "runs": String(report.summary.runs),
            "generator": "launchprof", "timeOrigin": "each run's spawn",
        ]
        if let buildID = report.target.buildID { otherData["buildID"] = buildID }
        return TraceDocument(otherData: otherData, traceEvents: events)
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

    private func metadata(_ name: String, pid: Int, tid: Int = 0, key: String, value: TraceEvent.Argument) -> TraceEvent {
        TraceEvent(name: name, ph: "M", pid: pid, tid: tid, args: [key: value])
    }

    private func runEvents(_ run: LaunchRun, pid: Int, sortIndex: Int) -> [TraceEvent] {
        var events = [
            // Issue 22: a run that did not complete says how it ended in its track's name.
            metadata("process_name", pid: pid, key: "name", value: .text(
                "run \(run.index) · pid \(run.pid)" + (run.failed ? " · \(run.resolvedOutcome)" : ""))),
            metadata("process_sort_index", pid: pid, key: "sort_index", value: .integer(Int64(sortIndex))),
        ]
        events += trackName("launch", pid: pid, tid: Self.launchTrack)
        events += phaseEvents(run.phases, pid: pid)
        if let flags = run.flags, !flags.isEmpty {
            events += trackName("flags", pid: pid, tid: Self.flagsTrack)
            let flagPhases = flags.map { flag in
                // A flag without a start is placed at the start of its phase.
                let start = flag.startNs ?? run.phases.first { $0.name == flag.phase }?.startNs ?? 0
                return (flag, start)
            }
            for (flag, start) in flagPhases.sorted(by: { $0.1 < $1.1 }) {
                var args: [String: TraceEvent.Argument] = [
                    "kind": .text(flag.kind.rawValue), "phase": .text(flag.phase), "object": .text(flag.object),
                    "advice": .text(flag.advice), "durationNs": .integer(Int64(clamping: flag.durationNs)),
                ]
                if let syscall = flag.syscall { args["syscall"] = .text(syscall) }
                if flag.startNs == nil { args["placedAt"] = .text("start of \(flag.phase)") }
                events.append(
                    TraceEvent(
                        name: "\(flag.kind.rawValue): \(flag.function)", cat: "flag", ph: "X", ts: Self.micros(start),
                        dur: Self.micros(flag.durationNs), pid: pid, tid: Self.flagsTrack, args: args))
            }
        }
        if let tree = run.callStackTree {
            let roots = tree.callStacks.filter(\.threadAttributed).flatMap(\.callStackRootFrames)
            let total = roots.reduce(0) { $0 + $1.sampleCount }
            let span = run.metrics.extendedLaunchNs ?? run.metrics.timeToFirstFrameNs
                ?? run.phases.map(\.endNs).max() ?? 0
            if total > 0, span > 0 {
                events += trackName("sampled stacks (by sample count, not time)", pid: pid, tid: Self.samplesTrack)
                var start = 0.0
                let scale = Self.micros(span) / Double(total)
                for root in roots {
                    events += flame(root, start: start, scale: scale, depth: 0, pid: pid)
                    start += Double(root.sampleCount) * scale
                }
            }
        }
        return events
    }

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
    /// first phase), the launch's phases laid out on the launch track.
    private func phaseEvents(_ phases: [LaunchPhase], pid: Int) -> [TraceEvent] {
        var events: [TraceEvent] = []
        var launchPhases: [LaunchPhase] = []
        var taskTracks: [String: Int] = [:]
        for phase in phases {
            if phase.name == LaunchPhase.extendedLaunch {
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
        let spans = phases.filter { $0.durationNs > 0 }
        let lanes = Self.lanes(spans.map { ($0.startNs, $0.endNs) })
        for lane in Set(lanes).sorted() where lane > 0 {
            events += trackName("app phases (overlapping)", pid: pid, tid: Self.launchTrack + lane)
        }
        for (phase, lane) in zip(spans, lanes) {
            events.append(slice(phase, pid: pid, tid: Self.launchTrack + lane))
        }
        for phase in phases where phase.durationNs == 0 {
            events.append(
                TraceEvent(
                    name: Self.label(phase), cat: "instant", ph: "i", ts: Self.micros(phase.startNs), pid: pid,
                    tid: Self.launchTrack, s: "t", args: Self.arguments(phase)))
        }
        return events
    }

    /// A lane per span such that spans on one lane nest or follow each other (what a viewer can
    /// draw on one track): the first lane that fits, in order of start (longer first on ties).
    public static func lanes(_ spans: [(start: UInt64, end: UInt64)]) -> [Int] {
        let order = spans.indices.sorted {
            spans[$0].start != spans[$1].start ? spans[$0].start < spans[$1].start : spans[$0].end > spans[$1].end
        }
        var stacks: [[UInt64]] = []
        var result = [Int](repeating: 0, count: spans.count)
        for index in order {
            let span = spans[index]
            var placed = false
            for lane in stacks.indices {
                while let top = stacks[lane].last, top <= span.start { stacks[lane].removeLast() }
                if stacks[lane].last.map({ $0 >= span.end }) ?? true {
                    stacks[lane].append(span.end)
                    result[index] = lane
                    placed = true
                    break
                }
            }
            if !placed {
                stacks.append([span.end])
                result[index] = stacks.count - 1
            }
        }
        return result
    }

    private func slice(_ phase: LaunchPhase, pid: Int, tid: Int) -> TraceEvent {
        TraceEvent(
            name: Self.label(phase), cat: Self.category(phase.name), ph: "X", ts: Self.micros(phase.startNs),
            dur: Self.micros(phase.durationNs), pid: pid, tid: tid, args: Self.arguments(phase))
    }

    private func flame(_ frame: CallStackTree.Frame, start: Double, scale: Double, depth: Int, pid: Int) -> [TraceEvent] {
        guard depth < CallStackTree.maximumDepth else { return [] }
        let name = frame.symbol ?? "\(frame.binaryName)+0x\(String(frame.offsetIntoBinaryTextSegment, radix: 16))"
        var events = [
            TraceEvent(
                name: name, cat: "samples", ph: "X", ts: start, dur: Double(frame.sampleCount) * scale, pid: pid,
                tid: Self.samplesTrack,
                args: ["samples": .integer(Int64(frame.sampleCount)), "binary": .text(frame.binaryName)])
        ]
        var childStart = start
        for child in frame.subFrames ?? [] {
            events += flame(child, start: childStart, scale: scale, depth: depth + 1, pid: pid)
            childStart += Double(child.sampleCount) * scale
        }
        return events
    }

    public static func label(_ phase: LaunchPhase) -> String {
        var name = phase.name
        if let object = phase.object { name += " " + (object.split(separator: "/").last.map(String.init) ?? object) }
        if let task = phase.task { name += " " + task }
        if let image = phase.image { name = "[\(image)] " + name }
        return name
    }

    static func category(_ name: String) -> String {
        if name.hasPrefix("loader.") || name == LaunchPhase.exec { return "loader" }
        if name.hasPrefix("program.") { return "program" }
        if name == LaunchPhase.extendedLaunch { return "extendedLaunch" }
        return "app"
    }

    static func arguments(_ phase: LaunchPhase) -> [String: TraceEvent.Argument] {
        var args: [String: TraceEvent.Argument] = [
            "startNs": .integer(Int64(clamping: phase.startNs)), "durationNs": .integer(Int64(clamping: phase.durationNs)),
        ]
        if let object = phase.object { args["object"] = .text(object) }
        if let task = phase.task { args["task"] = .text(task) }
        if let image = phase.image { args["image"] = .integer(Int64(image)) }
        return args
    }

    /// ns → µs, keeping the ns as three decimals.
    static func micros(_ ns: UInt64) -> Double { Double(ns) / 1_000 }
}
