import Foundation

/// Replays how Perfetto's JSON importer reads a Chrome trace's `systemTraceEvents` (ftrace text
/// lines) into its thread-state table, and reports every place where the lines would make it
/// note a loss or a mismatch instead of drawing the state launchprof meant. From Perfetto's
/// source:
/// - `SystraceLineTokenizer`: its pattern; the task is the text before the match; the time is
///   the seconds as a double times 1e9, truncated. Lines are sorted by time (ties in file order).
/// - `SystraceLineParser`: arguments split at spaces, each `key=value`; `sched_switch`,
///   `sched_waking` and `sched_blocked_reason` feed the trackers below.
/// - `FtraceSchedEventTracker::PushSchedSwitch`: per CPU, a switch whose `prev_pid` is not the
///   task the previous switch put on that CPU counts `mismatched_sched_switch_tids`; an
///   unparsable `prev_state` counts `task_state_invalid`.
/// - `ThreadStateTracker`: a switch-out of a thread whose last state is not Running is a data
///   loss (that state is never closed); a waking of a thread that is not blocked (Running or
///   `R`) goes to the spurious wake-ups, not the thread's states; a blocked reason changes the
///   thread's last blocked state only. The swapper (pid 0) has no states.
enum PerfettoSystraceReplay {
    /// One row of Perfetto's `thread_state` table; `durationNs` nil for a state never closed.
    struct StateRow: Equatable, CustomStringConvertible {
        var startNs: Int64
        var durationNs: Int64?
        var state: String
        var ioWait: Bool?
        var blockedFunction: String?
        var description: String {
            "\(state)@\(startNs)+\(durationNs.map(String.init) ?? "open")" + (ioWait.map { " io_wait=\($0)" } ?? "")
        }
    }

    struct Replay {
        var states: [Int: [StateRow]] = [:]
        var problems: [String] = []
    }

    /// Perfetto's `SystraceLineTokenizer` pattern (systrace_line_tokenizer.cc).
    static let linePattern = #"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):"#

    struct Line {
        var task: String
        var pid: Int
        var tgid: Int?
        var cpu: Int
        var ts: Int64
        var event: String
        var arguments: [String: String]
    }

    static func tokenize(_ text: String) -> Line? {
        guard let regex = try? Regex(linePattern), let match = text.firstMatch(of: regex) else { return nil }
        func group(_ index: Int) -> String? { match.output[index].substring.map(String.init) }
        guard let pid = group(1).flatMap({ Int($0) }), let cpu = group(3).flatMap({ Int($0) }),
            let seconds = group(4).flatMap({ Double($0) }), let event = group(5)
        else { return nil }
        var arguments: [String: String] = [:]
        for token in text[match.range.upperBound...].split(separator: " ") {
            let parts = token.split(separator: "=", omittingEmptySubsequences: false)
            if parts.count >= 2 { arguments[String(parts[0])] = String(parts[parts.count - 1]) } else { arguments["name"] = String(token) }
        }
        return Line(
            task: text[..<match.range.lowerBound].trimmingCharacters(in: .whitespaces), pid: pid,
            tgid: group(2).flatMap { Int($0) }, cpu: cpu, ts: Int64(seconds * 1e9), event: event, arguments: arguments)
    }

    /// `TaskState::FromSystrace`'s accepted letters, and the `+` of a preempted task.
    static func validState(_ text: String) -> Bool {
        let body = text.hasSuffix("+") ? String(text.dropLast()) : text
        return !body.isEmpty && body.allSatisfy { "RSDTtXZxKWPINp|".contains($0) }
    }

    /// The thread states of a trace file's `systemTraceEvents` (none without it), by tid.
    static func replay(_ bytes: [UInt8]) throws -> Replay {
        let json = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        guard let text = json?["systemTraceEvents"] as? String else { return Replay() }
        return replay(lines: text.split(separator: "\n").map(String.init))
    }

    static func replay(lines text: [String]) -> Replay {
        var replay = Replay()
        var lines: [Line] = []
        for raw in text where !raw.isEmpty {
            if let line = tokenize(raw) { lines.append(line) } else { replay.problems.append("not a systrace line: \(raw)") }
        }
        lines = lines.enumerated().sorted { ($0.element.ts, $0.offset) < ($1.element.ts, $1.offset) }.map(\.element)
        var onCPU: [Int: Int] = [:]
        func isRunning(_ tid: Int) -> Bool { replay.states[tid]?.last?.state == "Running" }
        func isBlocked(_ tid: Int) -> Bool { replay.states[tid]?.last.map { $0.state != "Running" && $0.state != "R" } ?? false }
        func close(_ tid: Int, at ts: Int64) {
            guard let last = replay.states[tid]?.indices.last else { return }
            replay.states[tid]![last].durationNs = ts - replay.states[tid]![last].startNs
        }
        func open(_ tid: Int, at ts: Int64, _ state: String) {
            guard tid != 0 else { return }
            replay.states[tid, default: []].append(StateRow(startNs: ts, durationNs: nil, state: state))
        }
        for line in lines {
            let where_ = "\(line.event) at \(line.ts) ns"
            switch line.event {
            case "sched_switch":
                guard let previous = line.arguments["prev_pid"].flatMap({ Int($0) }), let next = line.arguments["next_pid"].flatMap({ Int($0) }),
                    line.arguments["prev_prio"].flatMap({ Int($0) }) != nil, line.arguments["next_prio"].flatMap({ Int($0) }) != nil
                else {
                    replay.problems.append("\(where_): could not parse sched_switch")
                    continue
                }
                let state = line.arguments["prev_state"] ?? ""
                if !validState(state) { replay.problems.append("\(where_): task_state_invalid \(state)") }
                if let current = onCPU[line.cpu], current != previous {
                    replay.problems.append("\(where_): mismatched_sched_switch_tids (CPU \(line.cpu) runs \(current), prev_pid \(previous))")
                }
                onCPU[line.cpu] = next
                if previous != 0 {
                    if replay.states[previous] != nil, !isRunning(previous) {
                        replay.problems.append("\(where_): tid \(previous) switched out while not Running: its \(replay.states[previous]!.last!) is lost")
                    } else {
                        close(previous, at: line.ts)
                    }
                    open(previous, at: line.ts, state)
                }
                close(next, at: line.ts)
                open(next, at: line.ts, "Running")
            case "sched_waking":
                guard let wakee = line.arguments["pid"].flatMap({ Int($0) }) else {
                    replay.problems.append("\(where_): could not convert wakee_pid")
                    continue
                }
                if replay.states[wakee] == nil {
                    open(wakee, at: line.ts, "R")
                } else if isBlocked(wakee) {
                    close(wakee, at: line.ts)
                    open(wakee, at: line.ts, "R")
                } else {
                    replay.problems.append("\(where_): spurious waking of tid \(wakee) (\(replay.states[wakee]!.last!))")
                }
            case "sched_blocked_reason":
                guard let tid = line.arguments["pid"].flatMap({ Int($0) }), let ioWait = line.arguments["iowait"].flatMap({ Int($0) }) else {
                    replay.problems.append("\(where_): could not parse sched_blocked_reason")
                    continue
                }
                // Perfetto keeps the last blocked state until the thread runs again.
                guard let rows = replay.states[tid], let row = rows.lastIndex(where: { $0.state != "Running" && $0.state != "R" }),
                    !rows[row...].contains(where: { $0.state == "Running" })
                else {
                    replay.problems.append("\(where_): no blocked state of tid \(tid) to give a reason")
                    continue
                }
                replay.states[tid]![row].ioWait = ioWait != 0
                replay.states[tid]![row].blockedFunction = line.arguments["caller"]
            default:
                continue
            }
        }
        return replay
    }
}
