/// What one unit of loader work costs, for the estimates and advice of `launchprof inspect`.
///
/// Keep every coefficient in this file: a measured scaling study replaces the provisional
/// values without touching the code that uses them.
public struct LaunchCostModel: Codable, Sendable, Equatable {
    /// Loading one shared object (open, read headers, mmap its segments, bookkeeping) and its
    /// share of relocation set-up.
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

    /// Measured by the scaling study (`Benchmarks/`, `launchprof-scaling --runs 60 --rounds 6`;
    /// curves in Reports/scaling.json and .svg): generated C programs launched with `launchprof
    /// run`, slope of the least-squares line through the per-size medians, on this project's
    /// Debian 12 machine (2 vCPU x86-64, glibc 2.36, warm page cache, shared with other builds,
    /// so expect ±10% between runs when it is quiet and up to 3× when it is busy):
    /// - per object: 1–200 tiny libraries; loader.map 26.5 µs + loader.relocate 12.0 µs per
    ///   library (the relocation share is each object's own bookkeeping and its lookups through
    ///   a scope that grows with every library);
    /// - relative relocations: 1k–1M R_X86_64_RELATIVE in one library, 8.6 ns each (the store
    ///   and the copy-on-write fault of the page it lands on);
    /// - symbolic relocations: 1k–1M R_X86_64_64 against 1,024 symbols of another library,
    ///   33.1 ns each (a hash lookup per relocation; glibc's one-entry cache never hits);
    /// - jump slots bound at start-up: not measured separately; the same lookup as a symbolic
    ///   relocation;
    /// - initializers: 0–1,000 trivial constructors in one library, 27.6 ns each (the call
    ///   alone; an initializer's own work is extra).
    public static let standard = LaunchCostModel(
        perObjectNs: 38_500, perRelativeRelocationNs: 9, perSymbolicRelocationNs: 33, perJumpSlotNs: 33,
        perInitializerNs: 28,
        source: "measured: launchprof-scaling (Benchmarks/, Reports/scaling.json, 2026-11-22), slopes over "
            + "1-200 libraries, 1k-1M relative and symbolic relocations, 0-1,000 constructors; glibc 2.36, "
            + "2 vCPU x86-64 shared machine, warm cache",
        provisional: false)

    /// Estimated loader work for the given counts, in nanoseconds.
    public func estimateNs(
        sharedObjects: Int, relative: Int, symbolic: Int, jumpSlotsBoundNow: Int, initializers: Int
    ) -> Int {
        sharedObjects * perObjectNs + relative * perRelativeRelocationNs + symbolic * perSymbolicRelocationNs
            + jumpSlotsBoundNow * perJumpSlotNs + initializers * perInitializerNs
    }
}
