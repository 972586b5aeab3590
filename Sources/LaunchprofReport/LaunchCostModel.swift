/// What one unit of loader work costs, for the estimates and advice of `launchprof inspect`.
///
/// The estimate is ld.so's work from exec to the first initializer — what `launchprof run`
/// measures as `loader.map` + `loader.relocate` — as a linear function of the counts in
/// `LoaderWork`. Coefficients are integer picoseconds (several unit costs are below a
/// nanosecond). `launchprof calibrate` fits them on the host by least squares
/// (`CostModelFit`); without a calibration the built-in `standard` values apply.
public struct LaunchCostModel: Codable, Sendable, Equatable {
    /// ld.so's fixed start-up: self-relocation, tunables, the ld.so.cache, the program's headers.
    public var perLaunchPs: Int
    /// Opening and reading one shared object, its bookkeeping and RELRO protection.
    public var perObjectPs: Int
    /// Mapping one PT_LOAD segment.
    public var perSegmentPs: Int
    /// An address adjustment: a relative relocation or a lazy jump slot.
    public var perRelativeRelocationPs: Int
    /// A symbol lookup's fixed part (hashing, the definer's match and version check).
    public var perLookupPs: Int
    /// Each object a lookup searches (mostly a Bloom-filter test).
    public var perScopeStepPs: Int
    /// A page written by relocations: its copy-on-write fault.
    public var perPageTouchedPs: Int
    /// A version requirement checked at start-up.
    public var perVersionCheckPs: Int
    /// A page of hash or symbol tables first read by a lookup.
    public var perSymbolTablePagePs: Int
    /// A read fault of those tables (it maps a 64 KiB window of cached pages).
    public var perSymbolTableFaultPs: Int
    /// A byte of a name looked up: hashed, and compared with the definer's.
    public var perLookupNameBytePs: Int
    /// A lookup answered by an object with large symbol and string tables, beyond a lookup's
    /// price (`LoaderWork.largeTableLookups`).
    public var perLargeTableLookupPs: Int
    /// Calling one initializer, excluding its own work. Not part of the estimate (initializers
    /// run after `loader.relocate`); it prices the initializer advice.
    public var perInitializerPs: Int
    /// Where the figures come from.
    public var source: String
    /// The host calibration the figures come from; nil for the built-in defaults.
    public var calibration: Calibration?

    /// The host and fit of a calibration (`launchprof calibrate`).
    public struct Calibration: Codable, Sendable, Equatable {
        public var cpu: String
        public var kernel: String
        /// ISO 8601, UTC.
        public var measuredAt: String
        /// R² of the fit over the calibration's programs, in thousandths (1000 = every estimate exact).
        public var rSquaredPermille: Int
        /// Largest |estimate − measured| ÷ measured over the calibration's programs, in percent.
        public var worstErrorPercent: Int

        public init(cpu: String, kernel: String, measuredAt: String, rSquaredPermille: Int, worstErrorPercent: Int) {
            self.cpu = cpu
            self.kernel = kernel
            self.measuredAt = measuredAt
            self.rSquaredPermille = rSquaredPermille
            self.worstErrorPercent = worstErrorPercent
        }
    }

    public init(
        perLaunchPs: Int, perObjectPs: Int, perSegmentPs: Int, perRelativeRelocationPs: Int, perLookupPs: Int,
        perScopeStepPs: Int, perPageTouchedPs: Int, perVersionCheckPs: Int,
        perSymbolTablePagePs: Int, perSymbolTableFaultPs: Int = 0, perLookupNameBytePs: Int = 0,
        perLargeTableLookupPs: Int = 0, perInitializerPs: Int, source: String, calibration: Calibration? = nil
    ) {
        self.perLookupNameBytePs = perLookupNameBytePs
        self.perLargeTableLookupPs = perLargeTableLookupPs
        self.perSymbolTablePagePs = perSymbolTablePagePs
        self.perSymbolTableFaultPs = perSymbolTableFaultPs
        self.perLaunchPs = perLaunchPs
        self.perObjectPs = perObjectPs
        self.perSegmentPs = perSegmentPs
        self.perRelativeRelocationPs = perRelativeRelocationPs
        self.perLookupPs = perLookupPs
        self.perScopeStepPs = perScopeStepPs
        self.perPageTouchedPs = perPageTouchedPs
        self.perVersionCheckPs = perVersionCheckPs
        self.perInitializerPs = perInitializerPs
        self.source = source
        self.calibration = calibration
    }

    /// The built-in defaults: the scaling study's slopes (`Benchmarks/`, `launchprof-scaling
    /// --runs 60 --rounds 6`; Reports/scaling.json and .svg), measured on this project's Debian 12
    /// machine (2 vCPU x86-64, glibc 2.36, warm cache): 38.5 µs per library (loader.map 26.5 +
    /// loader.relocate 12.0), 8.6 ns per relative relocation, 33.1 ns per symbolic relocation
    /// (each a lookup: consecutive entries named different symbols), 27.6 ns per trivial
    /// initializer. The study varied one count at a time on tiny libraries, so it has no
    /// figure for segments, scope depth, pages, versions, symbol-table pages and faults, name
    /// bytes or large tables: those terms are 0 here, and real closures cost several times this
    /// estimate. `launchprof calibrate` measures them all.
    public static let standard = LaunchCostModel(
        perLaunchPs: 0, perObjectPs: 38_500_000, perSegmentPs: 0, perRelativeRelocationPs: 8_600,
        perLookupPs: 33_100, perScopeStepPs: 0, perPageTouchedPs: 0, perVersionCheckPs: 0,
        perSymbolTablePagePs: 0, perInitializerPs: 27_600,
        // One literal (a concatenation would be built at every start, where `inspect` is timed).
        source: """
            built-in defaults from Reports/scaling.json (launchprof-scaling, 2026-11-22): 1-200 libraries, \
            1k-1M relative and symbolic relocations, 0-1,000 constructors; glibc 2.36, 2 vCPU x86-64, warm cache; \
            uncalibrated: run `launchprof calibrate`
            """)

    /// The terms of the model, in the order of `coefficientsPs` and `features(_:)`.
    public static let termNames = [
        "launch", "mappedObjects", "segments", "relative", "lookups", "scopeSteps", "pagesTouched", "versionChecks",
        "symbolTablePages", "symbolTableFaults", "lookupNameBytes", "largeTableLookups",
    ]

    /// The coefficients in `termNames` order.
    public var coefficientsPs: [Int] {
        [
            perLaunchPs, perObjectPs, perSegmentPs, perRelativeRelocationPs, perLookupPs, perScopeStepPs,
            perPageTouchedPs, perVersionCheckPs, perSymbolTablePagePs, perSymbolTableFaultPs, perLookupNameBytePs,
            perLargeTableLookupPs,
        ]
    }

    /// A model with `coefficients` (picoseconds, `termNames` order) and this one's initializer price.
    public func with(coefficientsPs coefficients: [Int], source: String, calibration: Calibration?) -> LaunchCostModel {
        precondition(coefficients.count == Self.termNames.count, "one coefficient per term")
        return LaunchCostModel(
            perLaunchPs: coefficients[0], perObjectPs: coefficients[1], perSegmentPs: coefficients[2],
            perRelativeRelocationPs: coefficients[3], perLookupPs: coefficients[4], perScopeStepPs: coefficients[5],
            perPageTouchedPs: coefficients[6], perVersionCheckPs: coefficients[7],
            perSymbolTablePagePs: coefficients[8], perSymbolTableFaultPs: coefficients[9],
            perLookupNameBytePs: coefficients[10], perLargeTableLookupPs: coefficients[11], perInitializerPs: perInitializerPs,
            source: source, calibration: calibration)
    }

    /// The values the coefficients multiply, for a closure's summed `work` (launch counts once).
    public static func features(_ work: LoaderWork) -> [Double] {
        [
            1, Double(work.mappedObjects), Double(work.segments), Double(work.relative), Double(work.lookups),
            Double(work.scopeSteps), Double(work.pagesTouched), Double(work.versionChecks), Double(work.symbolTablePages),
            Double(work.symbolTableFaults), Double(work.lookupNameBytes), Double(work.largeTableLookups),
        ]
    }

    /// Estimated `loader.map` + `loader.relocate` for a closure whose objects sum to `work`, in ns.
    public func estimateNs(_ work: LoaderWork) -> Int {
        Int((picoseconds(work) / 1_000).rounded())
    }

    /// The part of the estimate one object's `work` accounts for (the launch term excluded), in ns.
    public func objectShareNs(_ work: LoaderWork) -> Int {
        Int(((picoseconds(work) - Double(perLaunchPs)) / 1_000).rounded())
    }

    private func picoseconds(_ work: LoaderWork) -> Double {
        zip(coefficientsPs, Self.features(work)).reduce(0.0) { $0 + Double($1.0) * $1.1 }
    }

    /// The estimated price of `count` units at `picoseconds` each, in ns.
    public static func ns(_ count: Int, _ picoseconds: Int) -> Int {
        Int((Double(count) * Double(picoseconds) / 1_000).rounded())
    }
}
