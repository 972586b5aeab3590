import LaunchprofReport

/// Each run's main thread as a thread-state track that Perfetto draws as its own (Running,
/// Runnable, Sleeping, Uninterruptible Sleep (IO) / (non-IO), Traced, in its own colours): the
/// Chrome JSON's `systemTraceEvents` string holds ftrace text lines — `sched_switch`,
/// `sched_waking` and `sched_blocked_reason` — which Perfetto's JSON importer hands to its
/// systrace parser, as it does for a system trace. (JSON slices are coloured by a hash of their
/// name; `cname` is ignored.) Lines are on the runs' own time origin (each run's spawn at 0, as
/// its slices), the thread in the run's process (`pid` as the run's track) with tid
/// `threadStateTID + position`, and on a CPU numbered by the run's position, so the runs, which
/// overlap in time, do not share a CPU track. A futex wait shows as Sleeping (Perfetto has no
/// lock state); its blocked function says `futex`.
extension TraceEventRenderer {
    static let threadStateTID = 100_000
    static let threadName = "main_thread"

    static func systemTrace(_ report: LaunchReport) -> String? {
        var lines: [String] = []
        for (position, run) in report.runs.enumerated() {
            guard let states = run.threadStates, !states.timeline.isEmpty else { continue }
            lines += systemTraceLines(states.timeline, pid: position + 1, tid: threadStateTID + position, cpu: position)
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n") + "\n"
    }

    /// The ftrace lines of one timeline.
    static func systemTraceLines(_ timeline: [ThreadStateSpan], pid: Int, tid: Int, cpu: Int) -> [String] {
        let cpuText = String(repeating: "0", count: max(0, 3 - String(cpu).count)) + String(cpu)
        func line(_ ns: UInt64, task: String, taskTID: Int, _ event: String, _ arguments: String) -> String {
            let seconds = "\(ns / 1_000_000_000)." + String(ns % 1_000_000_000 + 1_000_000_000).dropFirst()
            return "\(task)-\(taskTID) (\(taskTID == 0 ? 0 : pid)) [\(cpuText)] .... \(seconds): \(event): \(arguments)"
        }
        func switchLine(_ ns: UInt64, out: Bool, state: String) -> String {
            let me = "prev_comm=\(threadName) prev_pid=\(tid) prev_prio=120 prev_state=\(state)"
            let idle = "next_comm=swapper next_pid=0 next_prio=120"
            return out
                ? line(ns, task: threadName, taskTID: tid, "sched_switch", "\(me) ==> \(idle)")
                : line(ns, task: "swapper", taskTID: 0, "sched_switch",
                    "prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=\(threadName) next_pid=\(tid) next_prio=120")
        }
        var lines: [String] = []
        var previous: ThreadState?
        for span in timeline {
            let at = span.startNs
            switch span.state {
            case .running:
                lines.append(switchLine(at, out: false, state: "R"))
            case .runnable:
                if previous == .running || previous == nil {
                    lines.append(switchLine(at, out: true, state: "R+"))
                } else {
                    lines.append(line(at, task: "swapper", taskTID: 0, "sched_waking", "comm=\(threadName) pid=\(tid) prio=120 target_cpu=\(cpuText)"))
                }
            case .sleeping, .lock:
                lines.append(switchLine(at, out: true, state: "S"))
            case .diskIO, .other:
                lines.append(switchLine(at, out: true, state: "D"))
                let caller = (span.blockedIn ?? "unknown").filter { !$0.isWhitespace }
                lines.append(line(at, task: threadName, taskTID: tid, "sched_blocked_reason",
                    "pid=\(tid) iowait=\(span.state == .diskIO ? 1 : 0) caller=\(caller)"))
            case .traced:
                lines.append(switchLine(at, out: true, state: "t"))
            }
            previous = span.state
        }
        return lines
    }
}
