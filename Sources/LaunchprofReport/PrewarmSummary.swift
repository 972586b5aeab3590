/// What prewarming bought and cost across a `launchprof prewarm` session.
public struct PrewarmSummary: Sendable, Equatable, Codable {
    /// Ordinary time to first frame minus optimized, per pair in which both launches completed:
    /// negative where the prewarmed launch was slower (a loss is reported as a loss; `losses`
    /// counts those pairs).
    public var savingNs: SignedSummaryStatistics?
    /// Pairs in which the prewarmed launch was slower than the ordinary one.
    public var losses: Int
    public var prewarmNs: SummaryStatistics?
    public var holdNs: SummaryStatistics?
    public var ordinaryTimeToFirstFrameNs: SummaryStatistics?
    /// The paired ordinary launches' time to main (the page splits the ordinary bar there).
    public var ordinaryTimeToMainNs: SummaryStatistics?
    /// Memory one frozen process holds (PSS).
    public var frozenPSSBytes: SummaryStatistics?
    /// Hazards and notes found in the prewarm part (the session's hazard scan).
    public var hazards: [PrewarmHazard]
    /// No entry of severity `hazard` was found (notes do not count; false also when the scan
    /// could not run: see `hazardScanError`).
    public var prewarmSafe: Bool
    public var hazardScanError: String?
    /// Runs whose frozen process used CPU during the hold (a broken freeze).
    public var frozenCPURuns: Int
    /// `--pool`: hit rate and memory held.
    public var pool: PoolSummary?
    /// How the paired ordinary launches ended, one entry per distinct outcome.
    public var ordinaryOutcomes: [LaunchSummary.OutcomeCount]?

    public init(
        savingNs: SignedSummaryStatistics? = nil, losses: Int = 0, prewarmNs: SummaryStatistics? = nil,
        holdNs: SummaryStatistics? = nil, ordinaryTimeToFirstFrameNs: SummaryStatistics? = nil,
        frozenPSSBytes: SummaryStatistics? = nil, hazards: [PrewarmHazard] = [],
        prewarmSafe: Bool = false, hazardScanError: String? = nil, frozenCPURuns: Int = 0,
        pool: PoolSummary? = nil, ordinaryOutcomes: [LaunchSummary.OutcomeCount]? = nil
    ) {
        self.ordinaryOutcomes = ordinaryOutcomes
        self.savingNs = savingNs
        self.losses = losses
        self.prewarmNs = prewarmNs
        self.holdNs = holdNs
        self.ordinaryTimeToFirstFrameNs = ordinaryTimeToFirstFrameNs
        self.frozenPSSBytes = frozenPSSBytes
        self.hazards = hazards
        self.prewarmSafe = prewarmSafe
        self.hazardScanError = hazardScanError
        self.frozenCPURuns = frozenCPURuns
        self.pool = pool
    }

    /// `--pool N`: Android's pre-forked pool, refilled after each launch.
    public struct PoolSummary: Sendable, Equatable, Codable {
        public var size: Int
        public var launches: Int
        /// Launches that found a frozen process ready.
        public var hits: Int
        /// hits / launches, in per-mille (integers throughout the report).
        public var hitRatePerMille: Int
        /// Processes ended by `--ttl` before any launch took them.
        public var expired: Int
        /// PSS of all pooled processes together, sampled at each launch.
        public var heldPSSBytes: SummaryStatistics?
        /// Spawn → frozen of each refill.
        public var refillNs: SummaryStatistics?
        public var ttlNs: UInt64?

        public init(
            size: Int, launches: Int, hits: Int, expired: Int, heldPSSBytes: SummaryStatistics?,
            refillNs: SummaryStatistics?, ttlNs: UInt64?
        ) {
            self.size = size
            self.launches = launches
            self.hits = hits
            self.hitRatePerMille = launches == 0 ? 0 : hits * 1000 / launches
            self.expired = expired
            self.heldPSSBytes = heldPSSBytes
            self.refillNs = refillNs
            self.ttlNs = ttlNs
        }
    }
}
