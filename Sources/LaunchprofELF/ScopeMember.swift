import CLaunchprof
#if canImport(Glibc)
import Glibc
#endif

/// One object of the loader's lookup scope: its .dynsym with the hash table ld.so searches,
/// answering "does this object define NAME?" the way glibc 2.36's `do_lookup_x` does.
///
/// Reads go through bounds checks that answer "no" instead of throwing: a damaged table makes
/// the object define nothing, which only deepens the counted scope, never crashes inspect.
struct ScopeMember {
    let symbols: UnsafeRawBufferPointer
    let strings: UnsafeRawBufferPointer
    private let gnu: UnsafeRawBufferPointer?
    private let sysv: UnsafeRawBufferPointer?
    private let bucketCount: Int
    private let symbolOffset: Int
    private let bloomWords: Int
    private let bloomShift: UInt32
    /// The Bloom filter's words, their distance from the file's start, and glibc's
    /// `l_gnu_bitmask_idxbits` (word count - 1: linkers write a power of two).
    private let bloom: UnsafeRawPointer?
    private let bloomFileOffset: Int
    private let bloomIndexMask: UInt32
    /// The program: copy relocations skip it (its copy is the target, not the source).
    let isProgram: Bool
    /// DT_SYMBOLIC: its own definitions come before the global scope's.
    let isSymbolic: Bool
    /// The mapped file, to tell which of its pages a lookup reads.
    private let fileBase: UnsafeRawPointer?
    /// 4 KiB pages of the file: a lookup's first touch of a page of the Bloom filter, buckets,
    /// chains, symbols or names costs a page fault (and TLB misses) the loader's other work
    /// does not, which is what makes lookups in large tables (a 100 MB node) dear.
    let pageCount: Int
    static let pageShift = 12

    init(image: ELFImage, isProgram: Bool) {
        self.isProgram = isProgram
        isSymbolic = image.dynamic.symbolic
        let table = image.backing.dynamicSymbols
        let bytes = image.backing.bytes
        fileBase = bytes.baseAddress
        pageCount = (bytes.count >> Self.pageShift) + 1
        func slice(_ range: Range<Int>?) -> UnsafeRawBufferPointer? {
            guard let range, range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
            return UnsafeRawBufferPointer(rebasing: bytes[range])
        }
        symbols = slice(table?.symbols) ?? UnsafeRawBufferPointer(start: nil, count: 0)
        strings = slice(table?.strings) ?? UnsafeRawBufferPointer(start: nil, count: 0)
        let gnu = slice(table?.gnuHash)
        if let gnu, gnu.count >= 16 {
            bucketCount = Int(gnu.load32(0))
            symbolOffset = Int(gnu.load32(4))
            bloomWords = Int(gnu.load32(8))
            bloomShift = gnu.load32(12)
            self.gnu = bucketCount > 0 && bloomWords > 0 && 16 + bloomWords * 8 + bucketCount * 4 <= gnu.count ? gnu : nil
        } else {
            bucketCount = 0
            symbolOffset = 0
            bloomWords = 0
            bloomShift = 0
            self.gnu = nil
        }
        if let gnu = self.gnu, let base = gnu.baseAddress, let fileBase {
            bloom = base + 16
            bloomFileOffset = base + 16 - fileBase
            bloomIndexMask = UInt32(truncatingIfNeeded: bloomWords - 1)
        } else {
            bloom = nil
            bloomFileOffset = 0
            bloomIndexMask = 0
        }
        let sysv = slice(table?.sysvHash)
        self.sysv = sysv.flatMap { $0.count >= 8 ? $0 : nil }
        if let gnu = self.gnu, let base = gnu.baseAddress, let fileBase {
            // Bloom words, buckets and the chains up to the last symbol: all a search that
            // finds no candidate name can read.
            let chainsEnd = 16 + bloomWords * 8 + bucketCount * 4 + max(symbols.count / SymbolTable.entrySize - symbolOffset, 0) * 4
            let start = base - fileBase
            hashTablePages = (start >> Self.pageShift)...((start + max(min(chainsEnd, gnu.count), 1) - 1) >> Self.pageShift)
        } else {
            hashTablePages = nil
        }
    }

    /// The file pages of the GNU hash table (nil without one). Once a walk has marked them all,
    /// testing a name this object has no candidate for (`forEachExportHash`) marks nothing new
    /// and finds nothing: the walk can step over the object.
    let hashTablePages: ClosedRange<Int>?

    /// No hash table at all: the object defines nothing for a lookup and no search reads a page.
    var isInert: Bool { gnu == nil && sysv == nil }

    /// Symbol and string tables together larger than a 64-entry L1 data TLB of 4 KiB pages
    /// reaches (256 KiB, on AMD and Intel cores alike): lookups this object answers cost more
    /// than those small, cache-resident tables answer (`LoaderWork.largeTableLookups`).
    var hasLargeTables: Bool { symbols.count + strings.count > Self.largeTableBytes }
    static let largeTableBytes = 256 << 10

    /// Symbols in the GNU hash table's chains.
    var hashedSymbolCount: Int { gnu == nil ? 0 : max(symbolCount - symbolOffset, 0) }

    /// Calls `body` with each hashed symbol's chain value (its GNU hash, bit 0 the chain's end):
    /// a name whose hash differs from all of them but in bit 0 is not defined here.
    func forEachExportHash(_ body: (UInt32) -> Void) {
        guard let gnu else { return }
        let chains = 16 + bloomWords * 8 + bucketCount * 4
        var index = symbolOffset
        while index < symbolCount, chains + (index - symbolOffset) * 4 + 4 <= gnu.count {
            body(gnu.load32(chains + (index - symbolOffset) * 4))
            index += 1
        }
    }

    var symbolCount: Int { symbols.count / SymbolTable.entrySize }

    /// The Bloom filter's answer alone: false when the object certainly does not define a name
    /// of this GNU hash (the page of the word read marked), true when `defines` must search.
    /// Most members of a walk stop here, so it is inlined into the walk.
    @inline(__always)
    func mayDefine(gnuHash: UInt32, touched: UnsafeMutableBufferPointer<Bool>) -> Bool {
        guard let bloom else { return true }
        let offset = Int((gnuHash / 64) & bloomIndexMask) * 8
        let page = (bloomFileOffset + offset) >> Self.pageShift
        if page < touched.count { lp_flag_set(touched.baseAddress!, page) }
        let word = UInt64(littleEndian: bloom.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let mask = (UInt64(1) << UInt64(gnuHash % 64)) | (UInt64(1) << UInt64((gnuHash >> bloomShift) % 64))
        return word & mask == mask
    }

    /// Whether the object defines `name` for a lookup of class `plt` (jump slots and TLS:
    /// an undefined symbol with a value, a canonical PLT entry, does not count).
    /// `touched` (one flag per file page) records the pages the search reads.
    func defines(_ name: UnsafeRawBufferPointer, gnuHash: UInt32, plt: Bool, touched: UnsafeMutableBufferPointer<Bool>) -> Bool {
        if let gnu {
            let bloomOffset = 16 + Int((gnuHash / 64) & bloomIndexMask) * 8
            mark(gnu, bloomOffset, touched)
            let word = gnu.load64(bloomOffset)
            let mask = (UInt64(1) << UInt64(gnuHash % 64)) | (UInt64(1) << UInt64((gnuHash >> bloomShift) % 64))
            guard word & mask == mask else { return false }
            let buckets = 16 + bloomWords * 8
            let chains = buckets + bucketCount * 4
            let bucketOffset = buckets + Int(gnuHash % UInt32(bucketCount)) * 4
            mark(gnu, bucketOffset, touched)
            var index = Int(gnu.load32(bucketOffset))
            guard index >= symbolOffset, index != 0 else { return false }
            while index < symbolCount, chains + (index - symbolOffset) * 4 + 4 <= gnu.count {
                mark(gnu, chains + (index - symbolOffset) * 4, touched)
                let chainHash = gnu.load32(chains + (index - symbolOffset) * 4)
                if chainHash | 1 == gnuHash | 1, matches(index, name, plt: plt, touched: touched) { return true }
                if chainHash & 1 != 0 { return false }
                index += 1
            }
            return false
        }
        if let sysv {
            let buckets = Int(sysv.load32(0))
            guard buckets > 0, 8 + buckets * 4 <= sysv.count else { return false }
            var index = Int(sysv.load32(8 + Int(Self.sysvHash(name) % UInt32(buckets)) * 4))
            var steps = 0
            while index != 0, index < symbolCount, steps <= symbolCount,
                8 + buckets * 4 + index * 4 + 4 <= sysv.count
            {
                if matches(index, name, plt: plt, touched: touched) { return true }
                index = Int(sysv.load32(8 + buckets * 4 + index * 4))
                steps += 1
            }
        }
        return false
    }

    /// glibc's `check_match` without versions: defined, of a type lookups accept, same name.
    private func matches(_ index: Int, _ name: UnsafeRawBufferPointer, plt: Bool, touched: UnsafeMutableBufferPointer<Bool>) -> Bool {
        let entry = index * SymbolTable.entrySize
        guard entry + SymbolTable.entrySize <= symbols.count else { return false }
        mark(symbols, entry, touched)
        let info = symbols[entry + 4]
        let section = symbols.load16(entry + 6)
        let value = symbols.load64(entry + 8)
        let type = info & 0xf
        if value == 0 && section != 0xfff1 && type != 6 { return false }  // SHN_ABS, STT_TLS
        if plt && section == 0 { return false }
        // NOTYPE, OBJECT, FUNC, COMMON, TLS, GNU_IFUNC.
        guard (1 << UInt32(type)) & 0b100_0110_0111 != 0 else { return false }
        let nameOffset = Int(symbols.load32(entry))
        if nameOffset < strings.count { mark(strings, nameOffset, touched) }
        return nameEquals(nameOffset, name)
    }

    @inline(__always)
    func mark(_ table: UnsafeRawBufferPointer, _ offset: Int, _ touched: UnsafeMutableBufferPointer<Bool>) {
        guard let fileBase, let base = table.baseAddress else { return }
        let page = (base - fileBase + offset) >> Self.pageShift
        if page >= 0, page < touched.count { lp_flag_set(touched.baseAddress!, page) }
    }

    private func nameEquals(_ offset: Int, _ name: UnsafeRawBufferPointer) -> Bool {
        guard offset >= 0, offset + name.count < strings.count, let base = strings.baseAddress else { return false }
        guard strings[offset + name.count] == 0 else { return false }
        guard name.count > 0, let bytes = name.baseAddress else { return true }
        return memcmp(base + offset, bytes, name.count) == 0
    }

    /// The NUL-terminated name at `offset` of the string table, without its NUL, and its GNU
    /// hash, in one pass over its bytes.
    func nameAndGNUHash(at offset: Int) -> (name: UnsafeRawBufferPointer, hash: UInt32)? {
        guard offset >= 0, offset < strings.count, let base = strings.baseAddress else { return nil }
        var hash: UInt32 = 5381
        var end = offset
        // Eight bytes at a time while no NUL is among them: h·33⁸ + Σ bᵢ·33⁷⁻ⁱ has eight
        // independent products where the byte loop chains eight multiply-adds (names are ~25
        // bytes; gdb's closure hashes 350 KB of them).
        while end + 8 <= strings.count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: end, as: UInt64.self))
            guard (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 == 0 else { break }
            @inline(__always) func byte(_ index: UInt64) -> UInt32 {
                UInt32(truncatingIfNeeded: word >> (8 * index)) & 0xff
            }
            // Powers of 33 modulo 2³², from 33⁸ down.
            hash = hash &* 0x747c_7101 &+ byte(0) &* 0xec41_d4e1 &+ byte(1) &* 0x4cfa_3cc1 &+ byte(2) &* 0x0255_28a1
            hash = hash &+ byte(3) &* 0x0012_1881 &+ byte(4) &* 0x8c61 &+ byte(5) &* 0x441 &+ byte(6) &* 33 &+ byte(7)
            end += 8
        }
        while end < strings.count {
            let byte = base.load(fromByteOffset: end, as: UInt8.self)
            if byte == 0 { return (UnsafeRawBufferPointer(start: base + offset, count: end - offset), hash) }
            hash = hash &* 33 &+ UInt32(byte)
            end += 1
        }
        return nil
    }

    static func sysvHash(_ name: UnsafeRawBufferPointer) -> UInt32 {
        var hash: UInt32 = 0
        for byte in name {
            hash = (hash << 4) &+ UInt32(byte)
            let high = hash & 0xf000_0000
            if high != 0 { hash ^= high >> 24 }
            hash &= ~high
        }
        return hash
    }
}

extension UnsafeRawBufferPointer {
    /// Little-endian loads the callers have bounds-checked (for the loader-work scan).
    func load16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    func load32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    func load64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
