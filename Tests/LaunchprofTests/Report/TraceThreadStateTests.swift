import Foundation
import LaunchprofReport
import Testing

@testable import LaunchprofRenderers

/// The trace's thread-state track: ftrace lines in `systemTraceEvents` that Perfetto's systrace
/// tokenizer reads (its own pattern, from its source) and that put the main thread in each span's
/// state at the span's start.
@Suite("trace: thread states as Perfetto's own track")
struct TraceThreadStateTests {
    /// Perfetto's SystraceLineTokenizer pattern (systrace_line_tokenizer.cc).
    static let perfettoLine = #"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):"#

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
}
