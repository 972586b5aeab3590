import LaunchprofReport

/// A span of the main thread (a phase, the launch) or of another thread, split by thread state
/// as the terminal's waterfall and the HTML page draw it: the states with time in `ThreadState`
/// order (the order a bar is cut in), each with its share of their sum, and the largest three in
/// words. The page gets it from Swift (its view block) so that it computes no share of its own.
struct ThreadStateBar: Encodable, Equatable {
    struct Part: Encodable, Equatable {
        var state: ThreadState
        var ns: UInt64
        /// `ns` over the bar's `totalNs`: the parts' shares add up to 1.
        var share: Double
        /// The share as people read it: "62.3%".
        var percent: String
    }

    /// The sum of the parts: a run's phase's duration exactly; for the medians of a summary's
    /// phase, the sum of each state's median, which need not be the median duration.
    var totalNs: UInt64
    var parts: [Part]
    /// "running 62.3%, sleeping 30.1%, lock 7.60%": the largest three, largest first.
    var words: String

    /// nil for a span with no time in any state.
    init?(_ breakdown: ThreadStateBreakdown) {
        let total = breakdown.totalNs
        guard total > 0 else { return nil }
        totalNs = total
        parts = ThreadState.allCases.filter { breakdown[$0] > 0 }.map { state in
            Part(state: state, ns: breakdown[state], share: Double(breakdown[state]) / Double(total),
                 percent: TextWaterfallRenderer.percent(breakdown[state], of: total))
        }
        words = breakdown.largestFirst.prefix(3)
            .map { "\($0.state.label) \(TextWaterfallRenderer.percent($0.ns, of: total))" }.joined(separator: ", ")
    }
}
