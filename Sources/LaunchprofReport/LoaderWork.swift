/// What the dynamic loader does before the initializers, counted from the ELF files: the
/// quantities `LaunchCostModel` prices. One value per object, or summed over a closure.
///
/// Counts follow glibc 2.36's ld.so: a symbolic relocation costs a lookup unless the object's
/// one-entry cache answers (the previous symbolic relocation named the same symbol), and a
/// lookup walks the global scope (load order) until an object defines the symbol.
public struct LoaderWork: Codable, Sendable, Equatable {
    /// Objects ld.so opens and maps itself (not the program or ld.so, which the kernel maps).
    public var mappedObjects: Int
    /// PT_LOAD segments of those objects: an mmap (or mprotect) each.
    public var segments: Int
    /// Address adjustments without a lookup: relative relocations (DT_RELR included), the
    /// jump slots of lazily bound objects, and symbolic relocations that need none (glibc's
    /// one-entry cache answers them, or their symbol binds locally).
    public var relative: Int
    /// Symbol lookups: symbolic relocations, jump slots bound at start-up, TLS and copy
    /// relocations, less those glibc's per-object cache answers.
    public var lookups: Int
    /// Objects searched over all lookups: each lookup counts its definer's position in the
    /// scope (1 = the first object), or the whole scope for an undefined weak symbol.
    public var scopeSteps: Int
    /// Distinct 4 KiB pages relocations write (a copy-on-write fault each).
    public var pagesTouched: Int
    /// Version requirements (Vernaux entries) ld.so checks against their definers.
    public var versionChecks: Int
    /// 4 KiB pages of this object's hash and symbol tables that lookups read (a page fault
    /// each on first touch).
    public var symbolTablePages: Int
    /// Read faults those first touches take: the kernel maps a 64 KiB window of cached file
    /// pages per fault (fault-around), so the distinct windows count, not the pages. A lookup
    /// in a dense table (node's 1.8 MB of symbols) reads many pages of few windows.
    public var symbolTableFaults: Int
    /// Bytes of the names looked up (without their NULs), once per lookup: ld.so hashes each
    /// name and compares it with its definer's, a byte at a time. C names run 10–20 bytes a
    /// lookup, C++ and Swift names 25–75 (swift-frontend's 74), and 2k lookups of 88-byte names
    /// take ~0.2 ms more than of 7-byte ones.
    public var lookupNameBytes: Int
    /// Lookups answered by an object whose symbol and string tables exceed 256 KiB (the reach
    /// of a 64-entry L1 data TLB): libstdc++'s own in node, a Swift program's into Foundation
    /// and the runtime, LLVM's into libLLVM. In real closures they cost ~50–120 ns each beyond
    /// a lookup's price, most likely cache and TLB misses once the lookups' working set
    /// outgrows the caches (lookups in one large table, alone in a synthetic program, cost no
    /// more, so the price is fitted on system programs: Benchmarks/RESULTS.md §21).
    public var largeTableLookups: Int

    public init(
        mappedObjects: Int = 0, segments: Int = 0, relative: Int = 0, lookups: Int = 0, scopeSteps: Int = 0,
        pagesTouched: Int = 0, versionChecks: Int = 0, symbolTablePages: Int = 0,
        symbolTableFaults: Int = 0, lookupNameBytes: Int = 0, largeTableLookups: Int = 0
    ) {
        self.lookupNameBytes = lookupNameBytes
        self.largeTableLookups = largeTableLookups
        self.symbolTablePages = symbolTablePages
        self.symbolTableFaults = symbolTableFaults
        self.mappedObjects = mappedObjects
        self.segments = segments
        self.relative = relative
        self.lookups = lookups
        self.scopeSteps = scopeSteps
        self.pagesTouched = pagesTouched
        self.versionChecks = versionChecks
    }

    /// Mean number of objects a lookup searched (0 without lookups).
    public var meanScopeDepth: Double { lookups == 0 ? 0 : Double(scopeSteps) / Double(lookups) }

    public static func + (lhs: LoaderWork, rhs: LoaderWork) -> LoaderWork {
        LoaderWork(
            mappedObjects: lhs.mappedObjects + rhs.mappedObjects, segments: lhs.segments + rhs.segments,
            relative: lhs.relative + rhs.relative, lookups: lhs.lookups + rhs.lookups,
            scopeSteps: lhs.scopeSteps + rhs.scopeSteps, pagesTouched: lhs.pagesTouched + rhs.pagesTouched,
            versionChecks: lhs.versionChecks + rhs.versionChecks,
            symbolTablePages: lhs.symbolTablePages + rhs.symbolTablePages,
            symbolTableFaults: lhs.symbolTableFaults + rhs.symbolTableFaults,
            lookupNameBytes: lhs.lookupNameBytes + rhs.lookupNameBytes,
            largeTableLookups: lhs.largeTableLookups + rhs.largeTableLookups)
    }
}
