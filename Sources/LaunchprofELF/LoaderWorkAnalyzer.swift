import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Counts, per object of a closure, the work glibc 2.36's ld.so does before the initializers:
/// the segments it maps, the relocations it applies, the symbol lookups they cost and how far
/// each walks the global scope, the pages they write, the version requirements it checks.
///
/// It replays each object's relocation tables in the loader's order (DT_RELR, DT_RELA/DT_REL,
/// then DT_JMPREL) with the loader's one-entry lookup cache, and resolves every lookup against
/// the closure in load order (the global scope) through each object's own hash table. A name's
/// walk through the scope is the same for every object that imports it: the scans number the
/// closure's distinct names (`LookupNameTable`), each is walked once (its pages marked, members
/// that can add nothing stepped over: `walk`), and every lookup counts its name's steps.
public enum LoaderWorkAnalyzer {
    /// One `LoaderWork` per entry of `closure`, in the same order.
    public static func analyze(_ closure: Closure) -> [LoaderWork] {
        analyze(closure, exhaustive: false)
    }

    /// `exhaustive`: walk every name through every member (no stepping over), the reference
    /// the tests compare the stepping walk with; `threads`: how many walk (`walk`).
    static func analyze(_ closure: Closure, exhaustive: Bool, threads: Int = 1) -> [LoaderWork] {
        // A name looked up is mostly one some object imports; symbolic lookups of an object's
        // own exports add about half as many again (gdb: 7,326 imports, ~10,000 names).
        let imports = closure.entries.reduce(0) { $0 + $1.image.importedSymbolCount }
        let names = LookupNameTable(expectedNames: imports + imports / 2)
        let scanned = closure.entries.enumerated().map { position, entry in
            ScannedObject(entry.image, position: position, names: names)
        }
        return finish(closure.entries, scanned: scanned, names: names, exhaustive: exhaustive, threads: threads)
    }

    /// One object's relocation tables replayed (`Scan`): its work but for the scope walk, the
    /// names it looks up through the scope, and the pages of its own file the lookups read.
    struct ScannedObject {
        let member: ScopeMember
        let fileID: ELFImage.FileID
        let pagesRead: PageFlags
        let work: LoaderWork
        let lookedUp: [Int32]

        /// `position`: the object's place in the scope (0: the program).
        init(_ image: ELFImage, position: Int, names: LookupNameTable) {
            member = ScopeMember(image: image, isProgram: position == 0)
            fileID = image.fileID
            pagesRead = PageFlags(count: member.pageCount)
            var scan = Scan(member: member, touched: pagesRead.flags, names: names)
            var work = scan.run(image)
            // Read here, with the object's other tables (in `inspect`, on the scanner's thread).
            work.versionChecks = LoaderWorkAnalyzer.versionRequirements(image)
            self.work = work
            lookedUp = scan.lookedUp
        }
    }

    /// The closure's work from its objects' scans: the scope walk of every name looked up, the
    /// loader's own share, the pages read.
    /// `threads`: how many threads walk the names (`walk`); `helper`, a running thread for the second;
    /// `candidates`, the walk's index when made already (for `names` and these `scanned`).
    static func finish(
        _ entries: [Closure.Entry], scanned: [ScannedObject], names: LookupNameTable, exhaustive: Bool,
        threads: Int = 1, helper: WalkHelper? = nil, candidates: CandidateIndex? = nil
    ) -> [LoaderWork] {
        let scope = scanned.map(\.member)
        let touched = scanned.map(\.pagesRead.flags)
        var result = entries.indices.map { index in
            var work = scanned[index].work
            let source = entries[index].source
            if index > 0 && source != .interpreter {
                work.mappedObjects = 1
                work.segments = entries[index].image.segments.segments.count
            }
            if source == .interpreter {
                // ld.so relocates itself again once libc is in, its jump slots bound now (the
                // scan counted them lazy), and makes lookups of its own (`loaderOwnLookups`):
                // glibc 2.36 counts them all in LD_DEBUG=statistics.
                let slots = entries[index].image.relocations.jumpSlot
                work.relative = max(0, work.relative - slots)
                work.lookups += slots + Self.loaderOwnLookups
            }
            return work
        }
        let definers = walk(
            names, scope: scope, touched: touched, exhaustive: exhaustive, threads: threads, helper: helper,
            candidates: candidates)
        let largeTables = scope.map(\.hasLargeTables)
        for index in result.indices {
            for name in scanned[index].lookedUp {
                // A lookup searches up to its definer, or the whole scope for an undefined name.
                let definer = definers[Int(name)]
                result[index].scopeSteps += definer < 0 ? scope.count : definer + 1
                if definer >= 0 && largeTables[definer] { result[index].largeTableLookups += 1 }
            }
        }
        // Pages are the searched object's: counted once, however many lookups read them.
        for index in result.indices {
            result[index].symbolTablePages = scanned[index].pagesRead.markedCount
            result[index].symbolTableFaults = faultWindows(touched[index])
        }
        return result
    }

    /// For each name of `names`, the scope position of its first definer (-1 for an undefined,
    /// weak name, whose lookups search every member); the pages the searches read are marked in
    /// `touched`.
    ///
    /// Name by name, each searched through the members the way `do_lookup_x` does, except that a
    /// member is stepped over once its hash table's pages are all marked (`hashTablePages`) and it
    /// has no export whose hash matches the name's (`CandidateIndex`): such a search would read
    /// only pages already counted and find nothing. The counts are those of the full walk; most
    /// small members drop out after a few names, which cuts the Bloom filter tests (memory-bound,
    /// a cache miss each) several-fold on large closures.
    ///
    /// `threads`: with 2, the caller and a second thread (`helper`'s, else a new one) each walk
    /// every other name, marking the same page flags and sharing the candidate index. A name's
    /// search does not depend on the others', and a page's mark is the same whoever sets it, so
    /// the counts do not depend on the split; a member is stepped over as soon as the two
    /// together have read its hash table.
    static func walk(
        _ names: LookupNameTable, scope: [ScopeMember], touched: [UnsafeMutableBufferPointer<Bool>], exhaustive: Bool,
        threads: Int = 1, helper: WalkHelper? = nil, candidates: CandidateIndex? = nil
    ) -> Definers {
        let walk = Walk(
            names: names, scope: scope, touched: touched, exhaustive: exhaustive,
            candidates: candidates ?? CandidateIndex(names: names, memberCount: scope.count))
        // Below a few hundred names a second thread costs more than it saves.
        guard threads > 1, names.count >= 512 else {
            return Definers(shares: [walk.run(share: 0, of: 1)])
        }
        let other: () -> [Int32]
        if let helper {
            other = helper.run { walk.run(share: 1, of: 2) }
        } else {
            other = DedicatedThread(.offCurrentCPU) { walk.run(share: 1, of: 2) }.join
        }
        return Definers(shares: [walk.run(share: 0, of: 2), other()])
    }

    /// Each name's first definer's scope position (-1: none), from the walk's shares: name n is
    /// the (n / shares)th of share n % shares.
    struct Definers {
        let shares: [[Int32]]

        subscript(name: Int) -> Int {
            shares.count == 1 ? Int(shares[0][name]) : Int(shares[name & 1][name >> 1])
        }
    }

    /// One walk's inputs, shared by the threads that split its names (page flags and candidate
    /// masks are marked atomically).
    private struct Walk: @unchecked Sendable {
        let names: LookupNameTable
        let scope: [ScopeMember]
        let touched: [UnsafeMutableBufferPointer<Bool>]
        let exhaustive: Bool
        let candidates: CandidateIndex

        /// Walks the names numbered `share` modulo `shares`; returns their definers in that order
        /// (each thread its own array: names side by side would share cache lines between cores).
        func run(share: Int, of shares: Int) -> [Int32] {
            var definers = [Int32](repeating: -1, count: (names.count - share + shares - 1) / shares)
            let words = candidates.words
            // The members every name is tested against (bits by scope position): those with a
            // table not yet fully marked; and those stepped over, tested only where a candidate.
            var open = [UInt64](repeating: 0, count: words)
            for position in scope.indices where !scope[position].isInert {
                open[position / 64] |= 1 << UInt64(position % 64)
            }
            var steppedOver = [UInt64](repeating: 0, count: words)
            // Per member, the first page of its hash table not yet seen marked (pages only get
            // marked, so it only moves forward), and tests since it was last checked.
            var unmarked = scope.map { $0.hashTablePages?.lowerBound ?? 0 }
            var sinceCheck = [Int](repeating: 0, count: scope.count)
            scope.withUnsafeBufferPointer { members in
                touched.withUnsafeBufferPointer { touched in
                    for name in stride(from: share, to: names.count, by: shares) {
                        let hash = names.hash(name)
                        let lookupClass = names.lookupClass(name)
                        let plt = lookupClass == 1
                        search: for word in 0..<words {
                            var members64 = open[word] | (candidates.mask(name, word: word) & steppedOver[word])
                            while members64 != 0 {
                                let position = word * 64 + members64.trailingZeroBitCount
                                let bit = members64 & (0 &- members64)
                                members64 &= members64 &- 1
                                let member = members[position]
                                // Copy relocations skip the program (its copy is the target, not the source).
                                if lookupClass == 2 && member.isProgram { continue }
                                let pages = touched[position]
                                if member.mayDefine(gnuHash: hash, touched: pages),
                                    member.defines(names.name(name), gnuHash: hash, plt: plt, touched: pages)
                                {
                                    definers[name / shares] = Int32(truncatingIfNeeded: position)
                                    break search
                                }
                                guard !exhaustive, open[word] & bit != 0, let tablePages = member.hashTablePages else {
                                    continue
                                }
                                sinceCheck[position] += 1
                                guard sinceCheck[position] >= 16 else { continue }
                                sinceCheck[position] = 0
                                while unmarked[position] <= tablePages.upperBound, unmarked[position] < pages.count,
                                    lp_flag_get(pages.baseAddress!, unmarked[position])
                                {
                                    unmarked[position] += 1
                                }
                                guard unmarked[position] > tablePages.upperBound else { continue }
                                // Indexing costs a probe per export: worth it while enough names remain.
                                guard member.hashedSymbolCount <= 4 * (names.count - name) else {
                                    sinceCheck[position] = .min
                                    continue
                                }
                                // From the next name on, only names it may define are tested here
                                // (once indexed: while the other thread indexes it, it stays open).
                                if candidates.index(member, at: position) {
                                    open[word] &= ~bit
                                    steppedOver[word] |= bit
                                }
                            }
                        }
                    }
                }
            }
            return definers
        }
    }

    /// Lookups glibc 2.36 makes at every start-up besides the objects' relocations: calloc,
    /// free, malloc and realloc in the scope (`__rtld_malloc_init_real`), the vDSO's
    /// clock_gettime, gettimeofday, time, getcpu and clock_getres (`setup_vdso_pointers`), and
    /// libc's lazy jump slot of `__tunable_get_val`, bound when `__libc_early_init` calls it.
    static let loaderOwnLookups = 10

    /// Pages per fault-around window: a read fault maps 64 KiB of cached pages (the kernel's
    /// default `fault_around_bytes`).
    static let pagesPerFault = 16

    /// Distinct fault-around windows among the pages `touched` marks.
    static func faultWindows(_ touched: UnsafeMutableBufferPointer<Bool>) -> Int {
        var windows = 0
        var start = 0
        while start < touched.count {
            let end = min(start + pagesPerFault, touched.count)
            if PageFlags.count(UnsafeRawBufferPointer(touched), in: start..<end) > 0 { windows += 1 }
            start = end
        }
        return windows
    }

    /// Number of Vernaux entries under DT_VERNEED (each is checked against its definer).
    static func versionRequirements(_ image: ELFImage) -> Int {
        let dynamic = image.dynamic
        guard let address = dynamic.verneed, dynamic.verneedNum > 0,
            let view = try? image.segments.viewToSegmentEnd(in: image.backing.view, vaddr: address)
        else { return 0 }
        var total = 0
        var offset = 0
        for _ in 0..<min(Int(clamping: dynamic.verneedNum), 4_096) {
            guard let count = try? view.u16(offset + 2), let next = try? view.u32(offset + 12) else { break }
            total += Int(count)
            guard next != 0 else { break }
            offset += Int(next)
        }
        return total
    }

    /// The walk over one object's relocation tables.
    private struct Scan {
        /// The scanned object's own member, copied once (not at every relocation).
        let member: ScopeMember
        var work = LoaderWork()
        /// glibc's `l_lookup_cache`: the last symbol looked up and its lookup class.
        var cachedSymbol = -1
        var cachedClass = -1
        /// Pages written, one flag per page of the object's address span (a raw buffer: a
        /// struct's array would be checked for uniqueness at every relocation).
        var pages = UnsafeMutableBufferPointer<Bool>(start: nil, count: 0)
        var pageBase: UInt64 = 0

        /// The pages of the object's own file its lookups read (its symbols and their names).
        let touched: UnsafeMutableBufferPointer<Bool>
        /// The closure's names looked up so far.
        let names: LookupNameTable
        /// The number of each name this object looks up through the scope, once per lookup.
        var lookedUp: [Int32] = []

        init(member: ScopeMember, touched: UnsafeMutableBufferPointer<Bool>, names: LookupNameTable) {
            self.member = member
            self.touched = touched
            self.names = names
        }

        mutating func run(_ image: ELFImage) -> LoaderWork {
            let segments = image.segments.segments
            guard image.isDynamic, let low = segments.map(\.vaddr).min(),
                let high = segments.map({ $0.vaddr &+ $0.memorySize }).max(), high > low
            else { return work }
            pageBase = low & ~0xfff
            // At most one lookup per relocation that names a symbol: one allocation, no regrowth.
            let counts = image.relocations
            lookedUp.reserveCapacity(counts.symbolic + counts.jumpSlot + counts.tls + counts.copy + counts.other)
            let span = (high - pageBase + 0xfff) >> 12
            // A corrupt header could claim a huge span: such an object's pages go uncounted.
            if span < 1 << 22 {
                pages = .allocate(capacity: Int(span))
                pages.initialize(repeating: false)
            }
            defer { pages.deallocate() }

            let dynamic = image.dynamic
            let view = image.backing.view
            if let relr = dynamic.relr, dynamic.relrsz > 0,
                let table = try? image.segments.view(in: view, vaddr: relr, length: dynamic.relrsz)
            {
                scanRELR(table.bytes)
            }
            let plt = dynamic.jmprel.map { $0..<($0 &+ dynamic.pltrelsz) }
            for (address, size, entrySize, leadingRelative) in [
                (dynamic.rela, dynamic.relasz, Int(dynamic.relaent), dynamic.relaCount),
                (dynamic.rel, dynamic.relsz, Int(dynamic.relent), dynamic.relCount),
            ] {
                guard let address, size > 0, entrySize >= 16,
                    let table = try? image.segments.view(in: view, vaddr: address, length: size)
                else { continue }
                // DT_RELASZ may cover the PLT relocations too: those are scanned from DT_JMPREL.
                var end = table.count
                if let plt, plt.lowerBound >= address, plt.lowerBound < address &+ size {
                    end = Int(plt.lowerBound - address)
                }
                scan(UnsafeRawBufferPointer(rebasing: table.bytes[..<end]), entrySize: entrySize, jumpSlots: false,
                     bindNow: dynamic.bindNow, symbolsFrom: Int(clamping: leadingRelative) &* entrySize)
            }
            if let jmprel = dynamic.jmprel, dynamic.pltrelsz > 0,
                let table = try? image.segments.view(in: view, vaddr: jmprel, length: dynamic.pltrelsz)
            {
                scan(table.bytes, entrySize: dynamic.pltrel == 17 ? 16 : 24, jumpSlots: true, bindNow: dynamic.bindNow,
                     symbolsFrom: 0)
            }
            work.pagesTouched = PageFlags.count(UnsafeRawBufferPointer(pages), in: 0..<pages.count)
            return work
        }

        private mutating func touch(_ address: UInt64) {
            guard address >= pageBase else { return }
            let page = Int(truncatingIfNeeded: (address - pageBase) >> 12)
            if page < pages.count { pages[page] = true }
        }

        private mutating func scanRELR(_ table: UnsafeRawBufferPointer) {
            var base: UInt64 = 0
            var offset = 0
            while offset + 8 <= table.count {
                let word = table.load64(offset)
                offset += 8
                if word & 1 == 0 {
                    touch(word)
                    work.relative += 1
                    base = word &+ 8
                } else {
                    var bits = word >> 1
                    var address = base
                    while bits != 0 {
                        if bits & 1 != 0 {
                            touch(address)
                            work.relative += 1
                        }
                        bits >>= 1
                        address &+= 8
                    }
                    base &+= 63 * 8
                }
            }
        }

        /// `symbolsFrom`: where entries that may name a symbol start (after DT_RELACOUNT's).
        private mutating func scan(
            _ table: UnsafeRawBufferPointer, entrySize: Int, jumpSlots: Bool, bindNow: Bool, symbolsFrom: Int
        ) {
            var offset = 0
            // DT_RELACOUNT's leading entries: relative relocations, sorted by address as linkers
            // write them (112,000 of gdb's closure's 150,000). Only their pages matter, and
            // consecutive entries mostly share one: a page is marked when it changes.
            var lastPage = UInt64.max
            while offset + entrySize <= min(symbolsFrom, table.count) {
                let target = table.load64(offset)
                guard UInt32(truncatingIfNeeded: table.load64(offset + 8)) == 8 else { break }  // R_X86_64_RELATIVE
                offset += entrySize
                work.relative += 1
                if target >> 12 != lastPage {
                    lastPage = target >> 12
                    touch(target)
                }
            }
            var warmed = symbolsFrom
            while offset + entrySize <= table.count {
                if offset >= warmed {
                    warmed = warm(table, from: offset, entrySize: entrySize)
                }
                let target = table.load64(offset)
                let info = table.load64(offset + 8)
                offset += entrySize
                let type = UInt32(truncatingIfNeeded: info)
                let symbol = Int(info >> 32)
                switch type {
                case 0:  // R_X86_64_NONE
                    continue
                case 8, 38, 37:  // RELATIVE, RELATIVE64, IRELATIVE
                    work.relative += 1
                case 7 where !bindNow:  // a lazy jump slot: the loader only adds the load address
                    work.relative += 1
                default:
                    if symbol != 0 {
                        // JUMP_SLOT and the TLS types look up PLT-class symbols, COPY copy-class.
                        let lookupClass: Int
                        switch type {
                        case 7, 16, 17, 18, 36: lookupClass = 1
                        case 5: lookupClass = 2
                        default: lookupClass = 0
                        }
                        lookup(symbol, lookupClass: lookupClass)
                    }
                }
                touch(target)
            }
        }

        /// Reads the symbols and names the next entries (from `start`) look up, and returns
        /// where it stopped. Their cache misses are independent of one another here and overlap;
        /// in the lookups, each waits behind the previous one's hashing. The loads feed
        /// `keep`, so the optimizer does not drop them.
        private func warm(_ table: UnsafeRawBufferPointer, from start: Int, entrySize: Int) -> Int {
            let end = min(start &+ Self.warmEntries &* entrySize, table.count)
            let symbols = member.symbols
            let strings = member.strings
            var sink: UInt8 = 0
            var offset = start
            while offset + entrySize <= end {
                let symbol = Int(table.load64(offset + 8) >> 32)
                offset += entrySize
                let entry = symbol &* SymbolTable.entrySize
                guard symbol != 0, entry + SymbolTable.entrySize <= symbols.count else { continue }
                let name = Int(symbols.load32(entry))
                if name < strings.count { sink ^= strings[name] }
            }
            LoaderWorkAnalyzer.keep(sink)
            return offset
        }

        private static let warmEntries = 16

        private mutating func lookup(_ symbol: Int, lookupClass: Int) {
            let entry = symbol * SymbolTable.entrySize
            guard entry + SymbolTable.entrySize <= member.symbols.count else { return }
            let info = member.symbols[entry + 4]
            let visibility = member.symbols[entry + 5] & 3
            // Local symbols and hidden or internal ones bind to the object itself: no lookup.
            // glibc 2.36 looks up STV_PROTECTED ones (`dl_symbol_visibility_binds_local_p` is
            // only hidden and internal), then keeps the object's own definition. Those, and the
            // relocations the one-entry cache answers, are address adjustments all the same (a
            // table entry read, a value stored): the synthetic scope probes have 11k of them.
            guard info >> 4 != 0, visibility == 0 || visibility == 3 else {
                work.relative += 1
                return
            }
            guard symbol != cachedSymbol || lookupClass != cachedClass else {
                work.relative += 1
                return
            }
            cachedSymbol = symbol
            cachedClass = lookupClass
            let nameOffset = Int(member.symbols.load32(entry))
            guard let (name, hash) = member.nameAndGNUHash(at: nameOffset) else { return }
            work.lookups += 1
            // Hashed here and compared with the definer's name: a byte at a time.
            work.lookupNameBytes += name.count
            // The importer's own symbol and name are read too (the name to hash it): node's
            // imports, named all over 5 MB of strings, fault in 58 windows of their own.
            member.mark(member.symbols, entry, touched)
            member.mark(member.strings, nameOffset, touched)
            let plt = lookupClass == 1
            // DT_SYMBOLIC: the object's own definitions first.
            if member.isSymbolic, member.defines(name, gnuHash: hash, plt: plt, touched: touched) {
                work.scopeSteps += 1
                return
            }
            // Walked later, with every other name of the closure (`walk`).
            lookedUp.append(Int32(truncatingIfNeeded: names.number(name, hash: hash, lookupClass: lookupClass)))
        }
    }
}

extension LoaderWorkAnalyzer {
    /// Takes the result of loads made only to bring their lines into the cache ahead of use:
    /// a call the optimizer cannot see through, so those loads stay.
    @inline(never)
    static func keep(_ value: UInt8) {
        if value == 0xA5 { warmSink.store(value, ordering: .relaxed) }
    }
}

/// Where `keep` stores a value now and then.
private let warmSink = Atomic<UInt8>(0)
