import LaunchprofReport

/// The page's thread states (issue 34): what it draws that the report does not spell out — each
/// bar's shares (`ThreadStateBar`), the states' labels and colours' legend, the tasks' names and
/// the text's own sentences — so the script computes no share, median or label. The times stay
/// in the embedded report, where the script reads them beside these.
extension HTMLReportView {
    /// A state as the legend shows it; the page's colour for it is the style sheet's
    /// `.state-<state>` (`HTMLReportStyle.stateStyle`).
    struct StateLegendEntry: Encodable {
        var state: ThreadState
        var label: String
        /// The state Perfetto shows for it in the trace's thread-state track.
        var perfetto: String
    }

    /// The thread states over the runs (`summary.threadStates`), in the text's words.
    struct LaunchStates: Encodable {
        /// "main thread, spawn → first frame (median of 3 runs)".
        var title: String
        /// Each state's median over the launch.
        var bar: ThreadStateBar?
        /// "no thread states in run 2: …", when some runs lost theirs.
        var lostRuns: String?
        /// Parallel to `summary.threadStates.reasons`: "2 of 3 runs, raised at ≥ 10% …, mostly in …".
        var reasonContexts: [String]
        /// What the text says when no reason passed its threshold.
        var noReason: String
    }

    /// One run's thread states (`runs[i].threadStates`): its bars, its words and its tasks' names,
    /// each array parallel to the report's; for a run without states, only why.
    struct RunStates: Encodable {
        /// Why the run has none (its warning), when it has none.
        var missing: String?
        /// "run 0: main thread, spawn → 90.1 ms (the 201 ms hold left out)".
        var title: String?
        /// The main thread over the launch.
        var launch: ThreadStateBar?
        /// Parallel to `reasons`: "75% of the launch, raised at ≥ 50% …, mostly in didFinishLaunching".
        var reasonContexts: [String]
        /// Parallel to `cpuCompetitors`: "cc1plus 4410".
        var competitors: [String]
        /// Parallel to `wakers`: "Xvfb 812", "a timer".
        var wakers: [String]
        /// Parallel to `lockHolders`.
        var lockHolders: [String]
        /// Parallel to `threads`: each other thread's states over its life in the launch.
        var threads: [ThreadStateBar?]
    }

    static let stateLegend = ThreadState.allCases.map { state in
        StateLegendEntry(state: state, label: state.label, perfetto: HTMLReportStyle.stateStyle(state).perfetto)
    }

    static func launchStates(_ report: LaunchReport) -> LaunchStates? {
        guard let states = report.summary.threadStates else { return nil }
        return LaunchStates(
            title: TextWaterfallRenderer.launchStatesTitle(states), bar: ThreadStateBar(states.launch),
            lostRuns: TextWaterfallRenderer.runsWithoutThreadStates(report),
            reasonContexts: states.reasons.map { TextWaterfallRenderer.reasonContext($0, of: states) },
            noReason: TextWaterfallRenderer.noReason)
    }

    static func runStates(_ run: LaunchRun) -> RunStates {
        guard let states = run.threadStates else {
            let why = run.warnings.first { $0.code == .threadStatesLost || $0.code == .threadStatesUnavailable }
            return RunStates(
                missing: "no thread states in run \(run.index)" + (why.map { ": " + $0.message } ?? ""), reasonContexts: [],
                competitors: [], wakers: [], lockHolders: [], threads: [])
        }
        let hold = run.prewarm?.holdNs ?? 0
        return RunStates(
            title: "run \(run.index): main thread, spawn → \(DurationText.text(states.launchEndNs))"
                + (hold > 0 ? " (the \(DurationText.text(hold)) hold left out)" : ""),
            launch: ThreadStateBar(states.launch),
            reasonContexts: states.reasons.map { reason in
                "\(reason.percentOfLaunch)% of the launch, raised at \(reason.threshold)" + (reason.phase.map { ", mostly in \($0)" } ?? "")
            },
            competitors: states.cpuCompetitors.map(\.task.text), wakers: states.wakers.map(\.wakerText),
            lockHolders: states.lockHolders.map(\.task.text), threads: states.threads.map { ThreadStateBar($0.states) })
    }

    /// A phase's bar: nil for an instant or a phase without states.
    static func phaseStates(_ breakdown: ThreadStateBreakdown?, durationNs: UInt64) -> ThreadStateBar? {
        guard durationNs > 0 else { return nil }
        return breakdown.flatMap(ThreadStateBar.init)
    }
}
