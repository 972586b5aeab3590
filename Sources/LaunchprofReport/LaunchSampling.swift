/// How a run was sampled (`--sample`), and what the samples add up to.
public struct LaunchSampling: Sendable, Equatable, Codable {
    /// Samples per second of on-CPU time.
    public var rateHz: Int
    public var periodNs: UInt64
    /// Stacks captured on the main thread before readiness (on-CPU samples and switch-outs).
    public var sampleCount: Int
    /// Main-thread time from the spawn to readiness by state.
    public var onCPUNs: UInt64
    public var runnableNs: UInt64
    public var blockedNs: UInt64
    /// Records the kernel dropped because launchprof read them too late (0 normally).
    public var lostRecords: Int
    /// Set when nothing could be said: "too short to sample: …".
    public var note: String?
    /// A prewarmed launch's hold (frozen by launchprof), left out of every figure here and of
    /// the run's flags and call stack trees: the process did nothing of its own in it.
    public var frozenNs: UInt64?
    /// launchprof's own cost after the launch: stacks unwound, their frames, and the time
    /// libunwind took for them (naming the frames is not included).
    public var unwoundSamples: Int
    public var unwoundFrames: Int
    public var unwindNs: UInt64
    /// The main thread's stacks per phase, in the order the phases ran.
    public var phaseCallStackTrees: [PhaseCallStackTree]

    public init(
        rateHz: Int, periodNs: UInt64, sampleCount: Int = 0, onCPUNs: UInt64 = 0,
        runnableNs: UInt64 = 0, blockedNs: UInt64 = 0, lostRecords: Int = 0, note: String? = nil,
        phaseCallStackTrees: [PhaseCallStackTree] = [], unwoundSamples: Int = 0, unwoundFrames: Int = 0,
        unwindNs: UInt64 = 0
    ) {
        self.unwoundSamples = unwoundSamples
        self.unwoundFrames = unwoundFrames
        self.unwindNs = unwindNs
        self.rateHz = rateHz
        self.periodNs = periodNs
        self.sampleCount = sampleCount
        self.onCPUNs = onCPUNs
        self.runnableNs = runnableNs
        self.blockedNs = blockedNs
        self.lostRecords = lostRecords
        self.note = note
        self.phaseCallStackTrees = phaseCallStackTrees
    }

    /// The note of a launch shorter than one sample period.
    public static func tooShortNote(launchNs: UInt64, periodNs: UInt64, rateHz: Int) -> String {
        "too short to sample: the launch took \(DurationText.text(launchNs)), less than one sample period (\(DurationText.text(periodNs)) at \(rateHz) Hz); sample at a higher --sample rate"
    }
}

/// The call stack tree of one phase.
public struct PhaseCallStackTree: Sendable, Equatable, Codable {
    public var phase: String
    public var callStackTree: CallStackTree

    public init(phase: String, callStackTree: CallStackTree) {
        self.phase = phase
        self.callStackTree = callStackTree
    }
}
