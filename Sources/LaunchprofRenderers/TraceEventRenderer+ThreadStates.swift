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
            lines += systemTraceLines(
                states.timeline, hold: run.prewarm?.holdRange, pid: position + 1, tid: threadStateTID + position, cpu: position)
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n") + "\n"
    }

    /// The blocked function Perfetto shows for a prewarmed launch's hold.
    static let holdCaller = "prewarm.hold"

    /// The ftrace lines of one timeline. A prewarmed launch's `hold` is in no state of the
    /// report (the process was frozen by launchprof), but a Perfetto thread-state track has no
    /// holes — each state lasts until the next — so it is drawn as launchprof's stop, its
    /// blocked function `prewarm.hold`, under the launch track's hold slice.
    static func systemTraceLines(_ timeline: [ThreadStateSpan], hold: Range<UInt64>? = nil, pid: Int, tid: Int, cpu: Int) -> [String] {
        var timeline = timeline
        if let hold, !hold.isEmpty {
            let held = ThreadStateSpan(startNs: hold.lowerBound, durationNs: UInt64(hold.count), state: .traced, blockedIn: holdCaller)
            timeline.insert(held, at: timeline.firstIndex { $0.startNs >= hold.lowerBound } ?? timeline.endIndex)
        }
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
        // Perfetto's thread-state tracker reads a switch-out of a thread that is not Running as
        // lost data (it never closes the state before), and a waking of one that is not blocked
        // as spurious: the lines follow where the thread is, as the kernel's would.
        var onCPU = false
        var waiting = false
        for span in timeline where span.durationNs > 0 {
            let at = span.startNs
            let first = lines.isEmpty
            switch span.state {
            case .running:
                if !onCPU { lines.append(switchLine(at, out: false, state: "R")) }
                onCPU = true
            case .runnable:
                if onCPU {
                    lines.append(switchLine(at, out: true, state: "R+"))
                } else if waiting || first {
                    lines.append(line(at, task: "swapper", taskTID: 0, "sched_waking", "comm=\(threadName) pid=\(tid) prio=120 target_cpu=\(cpuText)"))
                }
                onCPU = false
                waiting = false
            case .sleeping, .lock, .diskIO, .other, .traced:
                // One wait straight after another (the thread ran between them for less than the
                // timeline resolves): back on the CPU for no time, as Perfetto needs to see.
                if !onCPU, !first { lines.append(switchLine(at, out: false, state: "R")) }
                switch span.state {
                case .diskIO, .other:
                    lines.append(switchLine(at, out: true, state: "D"))
                    let caller = (span.blockedIn ?? "unknown").filter { !$0.isWhitespace }
                    lines.append(line(at, task: threadName, taskTID: tid, "sched_blocked_reason",
                        "pid=\(tid) iowait=\(span.state == .diskIO ? 1 : 0) caller=\(caller)"))
                case .traced:
                    lines.append(switchLine(at, out: true, state: "t"))
                    if span.blockedIn == holdCaller {
                        lines.append(line(at, task: threadName, taskTID: tid, "sched_blocked_reason", "pid=\(tid) iowait=0 caller=\(holdCaller)"))
                    }
                default: lines.append(switchLine(at, out: true, state: "S"))
                }
                onCPU = false
                waiting = true
            }
        }
        return lines
    }
}
