/// The prewarm side of one `launchprof prewarm` run: the prewarm part, the hold, the resume,
/// and the ordinary launch of the same program it is paired with. Times in ns; `…AtNs` from the
/// prewarmed process's spawn.
public struct PrewarmRun: Sendable, Equatable, Codable {
    /// Where the process was frozen: `main` or `willFinishLaunching`.
    public var freezeAt: String
    /// Spawn → frozen: the launch work prewarming moves ahead of the user's tap.
    public var prewarmNs: UInt64
    /// Frozen → resumed: never inside a user-driven metric.
    public var holdNs: UInt64
    /// When launchprof resumed the process (the user's tap), from the spawn.
    public var resumeAtNs: UInt64
    /// CPU time (user + system, in clock ticks turned into ns) the process used while frozen;
    /// 0 for a correct freeze.
    public var frozenCPUNs: UInt64
    /// Proportional set size of the frozen process (`/proc/PID/smaps_rollup`).
    public var frozenPSSBytes: UInt64?
    /// The ordinary launch paired with this run: its time to first frame from its spawn.
    public var ordinaryTimeToFirstFrameNs: UInt64?
    public var ordinaryTimeToMainNs: UInt64?
    public var ordinaryPid: Int32?
    /// How the paired ordinary launch ended (a failed one gives no saving).
    public var ordinaryOutcome: RunOutcome?
    /// Ordinary time to first frame minus the prewarmed launch's optimized one; nil unless both
    /// launches of the pair completed.
    public var savingNs: Int64?
    /// Pool mode: the launch found a frozen process ready (false: it launched cold).
    public var poolHit: Bool?

    public init(
        freezeAt: String, prewarmNs: UInt64, holdNs: UInt64, resumeAtNs: UInt64,
        frozenCPUNs: UInt64 = 0, frozenPSSBytes: UInt64? = nil
    ) {
        self.freezeAt = freezeAt
        self.prewarmNs = prewarmNs
        self.holdNs = holdNs
        self.resumeAtNs = resumeAtNs
        self.frozenCPUNs = frozenCPUNs
        self.frozenPSSBytes = frozenPSSBytes
    }

    /// The hold on the run's timeline (ns from the spawn): frozen → resumed. The process did
    /// nothing of its own in it, so no flag, hang, sampled stack or thread state falls in it;
    /// empty for a pool miss (launched from the spawn, never frozen).
    public var holdRange: Range<UInt64> {
        let start = resumeAtNs >= holdNs ? resumeAtNs - holdNs : 0
        return start..<max(start, resumeAtNs)
    }
}
