import LaunchprofReport

/// The waterfall's thread states: a bar under each phase split by the main thread's median state
/// (Perfetto's colours where colour is on, a letter per state where it is not), and the
/// slow-launch reasons with their thresholds and advice.
extension TextWaterfallRenderer {
    /// A state's mark in the bar, and its colour (256-colour ANSI, near Perfetto's own: running
    /// dark green, runnable lime, sleeping pale grey, disk I/O orange, other uninterruptible
    /// desaturated red; lock and launchprof's stops have no Perfetto colour of their own).
    static func mark(_ state: ThreadState) -> (character: Character, colour: String) {
        switch state {
        case .running: ("#", "38;5;28")
        case .runnable: ("=", "38;5;148")
        case .sleeping: (".", "38;5;252")
        case .lock: ("L", "38;5;134")
        case .diskIO: ("D", "38;5;214")
        case .other: ("U", "38;5;131")
        case .traced: ("T", "38;5;61")
        }
    }

    /// The line under a phase: its largest states in words, then the phase's bar (same columns)
    /// cut by state. nil for an instant or a phase without states.
    func stateLine(_ phase: PhaseSummary, prefixWidth: Int, scale: UInt64) -> String? {
        guard let states = phase.threadState, phase.durationNs.median > 0, scale > 0 else { return nil }
        let total = states.totalNs
        guard total > 0 else { return nil }
        let parts = states.largestFirst
        let words = parts.prefix(3).map { "\($0.state.label) \(Self.percent($0.ns, of: total))" }.joined(separator: ", ")
        var label = "  ↳ " + words
        if label.count > prefixWidth - 1 { label = String(label.prefix(prefixWidth - 2)) + "…" }
        label += String(repeating: " ", count: max(prefixWidth - label.count, 1))
        // The phase's bar geometry, cut in proportion to each state's share.
        let width = barWidth
        let from = min(max(Int((Double(phase.startNs.median) / Double(scale) * Double(width)).rounded(.down)), 0), width - 1)
        let length = min(max(1, Int((Double(phase.durationNs.median) / Double(scale) * Double(width)).rounded())), width - from)
        var bar = String(repeating: " ", count: from)
        var used = 0, accumulated: UInt64 = 0
        for state in ThreadState.allCases where states[state] > 0 {
            accumulated += states[state]
            let end = Int((Double(accumulated) / Double(total) * Double(length)).rounded())
            guard end > used else { continue }
            let mark = Self.mark(state)
            bar += paint(String(repeating: mark.character, count: end - used), code: mark.colour)
            used = end
        }
        return label + bar
    }

    /// The legend of the state bars.
    static var stateLegend: String {
        "states: " + ThreadState.allCases.map { "\(mark($0).character) \($0.label)" }.joined(separator: "  ")
    }

    /// Why the launch took as long as it did: the main thread's median states over the launch
    /// and each reason raised, with how many runs raised it, its threshold and its advice.
    func threadStateLines(_ report: LaunchReport) -> [String] {
        let lost = report.runs.filter { run in run.warnings.contains { $0.code == .threadStatesLost } }
        guard let states = report.summary.threadStates else {
            let why = report.runs.lazy.flatMap(\.warnings).first { $0.code == .threadStatesUnavailable || $0.code == .threadStatesLost }
            return why.map { [$0.message] } ?? []
        }
        let launch = states.launch
        var lines = [
            "",
            "main thread, spawn → first frame (median of \(states.runs) run\(states.runs == 1 ? "" : "s")): "
                + launch.largestFirst.map { "\($0.state.label) \(DurationText.text($0.ns))" }.joined(separator: ", "),
        ]
        if !lost.isEmpty {
            // Those runs have no states at all: the medians and the reasons' run counts leave them out.
            lines.append("no thread states in run\(lost.count == 1 ? "" : "s") \(lost.map { String($0.index) }.joined(separator: ", ")):"
                + " the kernel dropped scheduler records (launchprof's buffer was full)")
        }
        if states.reasons.isEmpty {
            lines.append("no slow-launch reason passed its threshold")
            return lines
        }
        lines.append("why:")
        for (number, reason) in states.reasons.enumerated() {
            let runs = states.runs > 1 ? "\(reason.runs) of \(states.runs) runs, " : ""
            let phase = reason.phase.map { ", mostly in \($0)" } ?? ""
            lines.append(paint("  \(number + 1). \(reason.message)", code: "1"))
            lines.append("     [\(runs)raised at \(reason.threshold)\(phase)]")
            lines.append("     → \(reason.advice)")
        }
        return lines
    }
}
