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
        guard let states = phase.threadState.flatMap(ThreadStateBar.init), phase.durationNs.median > 0, scale > 0 else { return nil }
        var label = "  ↳ " + states.words
        if label.count > prefixWidth - 1 { label = String(label.prefix(prefixWidth - 2)) + "…" }
        label += String(repeating: " ", count: max(prefixWidth - label.count, 1))
        // The phase's bar geometry, cut in proportion to each state's share.
        let width = barWidth
        let from = min(max(Int((Double(phase.startNs.median) / Double(scale) * Double(width)).rounded(.down)), 0), width - 1)
        let length = min(max(1, Int((Double(phase.durationNs.median) / Double(scale) * Double(width)).rounded())), width - from)
        var bar = String(repeating: " ", count: from)
        var used = 0, accumulated: UInt64 = 0
        for part in states.parts {
            accumulated += part.ns
            let end = Int((Double(accumulated) / Double(states.totalNs) * Double(length)).rounded())
            guard end > used else { continue }
            let mark = Self.mark(part.state)
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
        guard let states = report.summary.threadStates else { return Self.noThreadStates(report).map { [$0] } ?? [] }
        var lines = [
            "",
            Self.launchStatesTitle(states) + ": "
                + states.launch.largestFirst.map { "\($0.state.label) \(DurationText.text($0.ns))" }.joined(separator: ", "),
        ]
        if let lost = Self.runsWithoutThreadStates(report) { lines.append(lost) }
        if states.reasons.isEmpty {
            lines.append(Self.noReason)
            return lines
        }
        lines.append("why:")
        for (number, reason) in states.reasons.enumerated() {
            lines.append(paint("  \(number + 1). \(reason.message)", code: "1"))
            lines.append("     [\(Self.reasonContext(reason, of: states))]")
            lines.append("     → \(reason.advice)")
        }
        return lines
    }

    // The words of the thread states' summary, shared with the HTML page's view.

    /// "main thread, spawn → first frame (median of 3 runs)".
    static func launchStatesTitle(_ states: ThreadStatesSummary) -> String {
        "main thread, spawn → first frame (median of \(states.runs) run\(states.runs == 1 ? "" : "s"))"
    }

    /// Why a report has no thread states at all (the first run's warning saying so), nil when no
    /// run says (states turned off, or a report from before them).
    static func noThreadStates(_ report: LaunchReport) -> String? {
        report.runs.lazy.flatMap(\.warnings).first { $0.code == .threadStatesUnavailable || $0.code == .threadStatesLost }?.message
    }

    /// The runs that lost their states, which the medians and the reasons' run counts leave out.
    static func runsWithoutThreadStates(_ report: LaunchReport) -> String? {
        let lost = report.runs.filter { run in run.warnings.contains { $0.code == .threadStatesLost } }
        guard !lost.isEmpty else { return nil }
        return "no thread states in run\(lost.count == 1 ? "" : "s") \(lost.map { String($0.index) }.joined(separator: ", ")):"
            + " the kernel dropped scheduler records (launchprof's buffer was full)"
    }

    static let noReason = "no slow-launch reason passed its threshold"

    /// "2 of 3 runs, raised at ≥ 10% of the launch and ≥ 1.00 ms, mostly in didFinishLaunching".
    static func reasonContext(_ reason: ThreadStatesSummary.Reason, of states: ThreadStatesSummary) -> String {
        let runs = states.runs > 1 ? "\(reason.runs) of \(states.runs) runs, " : ""
        return runs + "raised at \(reason.threshold)" + (reason.phase.map { ", mostly in \($0)" } ?? "")
    }
}
