/// How a bench entry launches its program. The one place a mode is spelled: parsing, the report
/// label and what it does to a run configuration (`apply`) all switch here.
public enum BenchMode: String, Sendable, Equatable, CaseIterable {
    /// The page cache as the previous run left it.
    case warm
    /// The closure's files evicted from the page cache before each run (`run --cold`).
    case cold
    /// Each run pairs a prewarmed launch (frozen at `main`, held for the launch's `hold`, resumed)
    /// with an ordinary one, as `launchprof prewarm` does; the report has both and the saving.
    case prewarm

    /// Parses a suite's `mode`.
    public init(suiteValue: String) throws(BenchError) {
        guard let mode = BenchMode(rawValue: suiteValue) else {
            throw .unavailableMode(mode: suiteValue, reason: "the modes are warm, cold and prewarm")
        }
        self = mode
    }

    /// Sets the run configuration's fields this mode decides.
    func apply(to configuration: inout RunConfiguration) {
        switch self {
        case .warm, .prewarm: configuration.cold = false
        case .cold: configuration.cold = true
        }
    }
}
