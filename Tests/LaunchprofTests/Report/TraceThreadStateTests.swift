import Foundation
import LaunchprofReport
import Testing

@testable import LaunchprofRenderers

/// The trace's thread-state track: ftrace lines in `systemTraceEvents` that Perfetto's systrace
/// tokenizer reads (its own pattern, from its source) and that put the main thread in each span's
/// state at the span's start.
@Suite("trace: thread states as Perfetto's own track")
struct TraceThreadStateTests {
    static let perfettoLine = PerfettoSystraceReplay.linePattern
    static let ms: UInt64 = 1_000_000

    @Test("every span starts with the line that puts the thread in its state, in Perfetto's format")
    func lines() throws {
        let ms: UInt64 = 1_000_000
        var run = ExportSamples.run(index: 0, firstFrameMs: 14)
        let timeline = [
            ThreadStateSpan(startNs: 0, durationNs: 2 * ms, state: .running),
            ThreadStateSpan(startNs: 2 * ms, durationNs: 1 * ms, state: .runnable),
            ThreadStateSpan(startNs: 3 * ms, durationNs: 4 * ms, state: .running),
            ThreadStateSpan(startNs: 7 * ms, durationNs: 3 * ms, state: .diskIO, blockedIn: "read"),
            ThreadStateSpan(startNs: 10 * ms, durationNs: 1 * ms, state: .runnable),
            ThreadStateSpan(startNs: 11 * ms, durationNs: 1 * ms, state: .running),
            ThreadStateSpan(startNs: 12 * ms, durationNs: 2 * ms + 123, state: .lock, blockedIn: "futex"),
        ]
        run.threadStates = LaunchThreadStates(
            mainThread: 40, launchEndNs: 14 * ms + 123, launch: ThreadStateBreakdown(runningNs: 14 * ms + 123), timeline: timeline)
        let bytes = try TraceEventRenderer().renderBytes(ExportSamples.report([run]))
        let document = try JSONDecoder().decode(TraceDocument.self, from: Data(bytes))
        let lines = try #require(document.systemTraceEvents).split(separator: "\n").map(String.init)
        let pattern = try Regex(Self.perfettoLine)
        for line in lines { #expect(line.firstMatch(of: pattern) != nil, "\(line)") }
        func at(_ ns: UInt64) -> [String] {
            let seconds = String(format: "%.9f", Double(ns) / 1e9)
            return lines.filter { $0.contains(" \(seconds): ") }
        }
        #expect(at(0).first?.contains("sched_switch: prev_comm=swapper") == true)
        #expect(at(2 * ms).first?.contains("prev_state=R+ ==>") == true, "preempted: runnable")
        #expect(at(7 * ms).contains { $0.contains("prev_state=D ==>") })
        #expect(at(7 * ms).contains { $0.contains("sched_blocked_reason: pid=100000 iowait=1 caller=read") })
        #expect(at(10 * ms).first?.contains("sched_waking: comm=main_thread pid=100000") == true)
        #expect(at(12 * ms).first?.contains("prev_state=S ==>") == true, "a futex wait is Sleeping to Perfetto")
        // The thread is in the run's process track (pid 1), as its slices.
        #expect(lines.allSatisfy { $0.contains("(1) [000]") || $0.contains("(0) [000]") })
        _ = try TraceEventRendererTests.expectWellFormed(bytes)
    }

    /// The state Perfetto's thread-state table shows for a span (a futex wait is Sleeping: it
    /// has no lock state).
    static func perfettoState(_ state: ThreadState) -> (String, Bool?) {
        switch state {
        case .running: ("Running", nil)
        case .runnable: ("R", nil)
        case .sleeping, .lock: ("S", nil)
        case .diskIO: ("D", true)
        case .other: ("D", false)
        case .traced: ("t", nil)
        }
    }

    /// Replays the lines as Perfetto's importer does and checks that its thread-state table holds
    /// the timeline: each span a row of its state, from its start to the next (within the 1 ns
    /// Perfetto's double seconds may lose), no data loss, mismatch or spurious wake-up; rows of
    /// no length (a wait straight after a wait passes through Running) and a preemption's `R+`
    /// read as the spans they stand for.
    static func expectPerfettoStates(
        _ bytes: [UInt8], timeline: [ThreadStateSpan], tid: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let replay = try PerfettoSystraceReplay.replay(bytes)
        #expect(replay.problems.isEmpty, "\(replay.problems.prefix(5))", sourceLocation: sourceLocation)
        let rows = (replay.states[tid] ?? []).filter { $0.durationNs != 0 }
        var expected: [(start: UInt64, state: String, ioWait: Bool?)] = []
        for span in timeline where span.durationNs > 0 {
            let (state, ioWait) = perfettoState(span.state)
            // Perfetto merges a runnable span into the runnable one before it (a waking of a
            // thread that is not blocked changes nothing).
            if state == "R", expected.last?.state == "R" { continue }
            expected.append((span.startNs, state, ioWait))
        }
        #expect(rows.count == expected.count, "rows \(rows) for \(expected.count) spans", sourceLocation: sourceLocation)
        for (row, span) in zip(rows, expected) {
            let state = row.state == "R+" ? "R" : row.state
            #expect(state == span.state && abs(row.startNs - Int64(span.start)) <= 1, "\(row) for \(span)", sourceLocation: sourceLocation)
            if let ioWait = span.ioWait { #expect(row.ioWait == ioWait, "\(row)", sourceLocation: sourceLocation) }
        }
        // Each row lasts until the next one starts; the last stays open (to the trace's end).
        for (row, next) in zip(rows, rows.dropFirst()) {
            #expect(row.durationNs.map { row.startNs + $0 } == next.startNs, "\(row) then \(next)", sourceLocation: sourceLocation)
        }
    }

    @Test("Perfetto's importer reads every span in its state: waits one after another, runnables in a row, the first span a wait")
    func perfettoReplay() throws {
        let ms = Self.ms
        var run = ExportSamples.run(index: 0, firstFrameMs: 20)
        let timeline = [
            ThreadStateSpan(startNs: 0, durationNs: 1 * ms, state: .sleeping),
            ThreadStateSpan(startNs: 1 * ms, durationNs: 2 * ms, state: .lock, blockedIn: "futex"),
            ThreadStateSpan(startNs: 3 * ms, durationNs: 1 * ms, state: .diskIO, blockedIn: "filemap_fault"),
            ThreadStateSpan(startNs: 4 * ms, durationNs: 1 * ms, state: .runnable),
            ThreadStateSpan(startNs: 5 * ms, durationNs: 1 * ms, state: .runnable),
            ThreadStateSpan(startNs: 6 * ms, durationNs: 3 * ms, state: .running),
            ThreadStateSpan(startNs: 9 * ms, durationNs: 1 * ms, state: .other, blockedIn: "do_exit"),
            ThreadStateSpan(startNs: 10 * ms, durationNs: 2 * ms, state: .traced, blockedIn: "ptrace_stop"),
            ThreadStateSpan(startNs: 12 * ms, durationNs: 1 * ms, state: .sleeping),
            ThreadStateSpan(startNs: 13 * ms, durationNs: 0, state: .running),
            ThreadStateSpan(startNs: 13 * ms, durationNs: 7 * ms + 7, state: .running),
        ]
        run.threadStates = LaunchThreadStates(
            mainThread: 40, launchEndNs: 20 * ms + 7, launch: ThreadStateBreakdown(runningNs: 20 * ms + 7), timeline: timeline)
        let bytes = try TraceEventRenderer().renderBytes(ExportSamples.report([run, run]))
        try Self.expectPerfettoStates(bytes, timeline: timeline, tid: TraceEventRenderer.threadStateTID)
        try Self.expectPerfettoStates(bytes, timeline: timeline, tid: TraceEventRenderer.threadStateTID + 1)
        try TraceViewerNesting.expectNested(bytes, "trace with thread states")
    }

    @Test("a prewarmed launch's hold: in no state of the report, drawn as launchprof's stop labelled prewarm.hold")
    func prewarmHold() throws {
        let ms = Self.ms
        var run = ExportSamples.run(index: 0, firstFrameMs: 250)
        run.prewarm = PrewarmRun(freezeAt: "main", prewarmNs: 40 * ms, holdNs: 200 * ms, resumeAtNs: 240 * ms)
        // The analysis leaves the hold out: the timeline has a hole where the process was frozen.
        let timeline = [
            ThreadStateSpan(startNs: 0, durationNs: 39 * ms, state: .running),
            ThreadStateSpan(startNs: 39 * ms, durationNs: 1 * ms, state: .traced, blockedIn: "ptrace_stop"),
            ThreadStateSpan(startNs: 240 * ms, durationNs: 1 * ms, state: .runnable),
            ThreadStateSpan(startNs: 241 * ms, durationNs: 9 * ms, state: .running),
        ]
        run.threadStates = LaunchThreadStates(
            mainThread: 40, launchEndNs: 250 * ms, launch: ThreadStateBreakdown(runningNs: 48 * ms, runnableNs: 1 * ms, tracedNs: 1 * ms),
            timeline: timeline)
        let bytes = try TraceEventRenderer().renderBytes(ExportSamples.report([run]))
        let drawn = timeline[0..<2] + [ThreadStateSpan(startNs: 40 * ms, durationNs: 200 * ms, state: .traced)] + timeline[2...]
        try Self.expectPerfettoStates(bytes, timeline: Array(drawn), tid: TraceEventRenderer.threadStateTID)
        let rows = try PerfettoSystraceReplay.replay(bytes).states[TraceEventRenderer.threadStateTID] ?? []
        let hold = try #require(rows.first { $0.startNs == Int64(40 * ms) && $0.durationNs != 0 })
        #expect(hold.state == "t" && hold.blockedFunction == TraceEventRenderer.holdCaller && hold.durationNs == Int64(200 * ms))
    }
}
