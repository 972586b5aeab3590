/// How a bench entry launches its program. The one place a mode is spelled: parsing, the report
/// label and what it does to a run configuration (`apply`) all switch here.
public enum BenchMode: String, Sendable, Equatable, CaseIterable {
    /// The page cache as the previous run left it.
    case warm
    /// The closure's files evicted from the page cache before each run (`run --cold`).
    case cold

    /// Parses a suite's `mode`; `prewarm` is named but not yet available.
    public init(suiteValue: String) throws(BenchError) {
        switch suiteValue {
        case "warm": self = .warm
        case "cold": self = .cold
        case "prewarm":
            throw .unavailableMode(mode: suiteValue, reason: "this launchprof has no `prewarm` yet; use warm or cold")
        default:
            throw .unavailableMode(mode: suiteValue, reason: "the modes are warm and cold")
        }
    }

    /// Sets the run configuration's fields this mode decides.
    func apply(to configuration: inout RunConfiguration) {
        switch self {
        case .warm: configuration.cold = false
        case .cold: configuration.cold = true
        }
    }
}
