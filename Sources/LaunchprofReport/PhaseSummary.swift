/// The distribution of one phase across runs.
public struct PhaseSummary: Sendable, Equatable, Codable {
    public var name: String
    public var object: String?
    public var task: String?
    public var image: Int?
    /// 1 for the second phase of the same name (and object, task, image) in a run, and so on;
    /// nil for the first.
    public var occurrence: Int?
    public var startNs: SummaryStatistics
    public var durationNs: SummaryStatistics
    /// launchprof's own cost inside the phase (`LaunchPhase.observerNs`), where runs report it.
    public var observerNs: SummaryStatistics?
    /// The main thread's time in the phase by scheduler state: each state's median over the runs
    /// that recorded states (medians of parts need not add up to the median duration).
    public var threadState: ThreadStateBreakdown?
    /// Who reported the phase (`LaunchPhase.source`), as its first run did.
    public var source: String?
    /// The library whose code called this `dlopen` (`LaunchPhase.caller`), as its first run saw it.
    public var caller: String?

    public init(
        name: String, object: String? = nil, task: String? = nil, image: Int? = nil,
        occurrence: Int? = nil, startNs: SummaryStatistics, durationNs: SummaryStatistics
    ) {
        self.name = name
        self.object = object
        self.task = task
        self.image = image
        self.occurrence = occurrence
        self.startNs = startNs
        self.durationNs = durationNs
    }

    /// An instant (`LaunchPhase.isInstant`): its start is what it says, its duration is 0.
    public var isInstant: Bool { LaunchPhase.isInstant(name: name, image: image) }
}
