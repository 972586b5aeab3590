/// What one unit of loader work costs, for the estimates and advice of `launchprof inspect`.
///
/// Keep every coefficient in this file: a measured scaling study replaces the provisional
/// values without touching the code that uses them.
public struct LaunchCostModel: Codable, Sendable, Equatable {
    /// Mapping one shared object (open, read headers, mmap its segments, bookkeeping).
    public var perObjectNs: Int
    public var perRelativeRelocationNs: Int
    /// A symbolic relocation: a symbol lookup through the scope's hash tables.
    public var perSymbolicRelocationNs: Int
    /// A jump slot bound at start-up (BIND_NOW); lazy slots cost this on first call instead.
    public var perJumpSlotNs: Int
    /// Calling one initializer, excluding the work it does (unknowable from the file).
    public var perInitializerNs: Int
    /// Where the figures come from.
    public var source: String
    /// True while the figures are rough single-machine measurements.
    public var provisional: Bool

    public init(
        perObjectNs: Int, perRelativeRelocationNs: Int, perSymbolicRelocationNs: Int, perJumpSlotNs: Int,
        perInitializerNs: Int, source: String, provisional: Bool
    ) {
        self.perObjectNs = perObjectNs
        self.perRelativeRelocationNs = perRelativeRelocationNs
        self.perSymbolicRelocationNs = perSymbolicRelocationNs
        self.perJumpSlotNs = perJumpSlotNs
        self.perInitializerNs = perInitializerNs
        self.source = source
        self.provisional = provisional
    }

    /// Provisional figures from LD_DEBUG=statistics (TSC ticks at 2.0 GHz), medians of 25
    /// runs on this project's Debian 12 machine (2 vCPU x86-64, glibc 2.36), warm page cache:
    /// - /usr/bin/gdb, 58 objects: "time needed to load objects" 0.37 ms → ~6 µs per object
    ///   (/bin/true: ~2 µs per small object);
    /// - relocation 1.21 ms for 111294 relative and 14176 other relocations; taking ~2 ns per
    ///   relative one (a load, an add, a store) leaves ~70 ns per symbol lookup (bound-now
    ///   jump slots are the same lookup);
    /// - initializers: not measured yet (1 µs is a placeholder for the call and its first page
    ///   faults, excluding the initializer's own work).
    public static let standard = LaunchCostModel(
        perObjectNs: 6_000, perRelativeRelocationNs: 2, perSymbolicRelocationNs: 70, perJumpSlotNs: 70,
        perInitializerNs: 1_000,
        source: "provisional: LD_DEBUG=statistics medians on /usr/bin/gdb and /bin/true, glibc 2.36, "
            + "2 vCPU x86-64, warm cache; per-relative and per-initializer costs are estimates",
        provisional: true)

    /// Estimated loader work for the given counts, in nanoseconds.
    public func estimateNs(
        sharedObjects: Int, relative: Int, symbolic: Int, jumpSlotsBoundNow: Int, initializers: Int
    ) -> Int {
        sharedObjects * perObjectNs + relative * perRelativeRelocationNs + symbolic * perSymbolicRelocationNs
            + jumpSlotsBoundNow * perJumpSlotNs + initializers * perInitializerNs
    }
}
