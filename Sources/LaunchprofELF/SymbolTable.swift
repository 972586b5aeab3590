/// A view of an ELF symbol table (Elf64_Sym entries) and its string table, with hash-table
/// lookups for .dynsym.
struct SymbolTable {
    static let entrySize = 24

    var symbols: ByteView
    var strings: ByteView
    /// DT_GNU_HASH / DT_HASH contents (to the end of their segment), when present.
    var gnuHash: ByteView?
    var sysvHash: ByteView?

    var count: Int { symbols.count / SymbolTable.entrySize }

    /// Number of .dynsym entries according to the hash tables, for files without section
    /// headers (DT_SYMTAB has no size of its own).
    static func symbolCount(gnuHash: ByteView?, sysvHash: ByteView?) throws(ELFError) -> Int? {
        if let sysvHash {
            return Int(try sysvHash.u32(4))  // nchain
        }
        guard let gnu = gnuHash else { return nil }
        let bucketCount = Int(try gnu.u32(0))
        let symbolOffset = Int(try gnu.u32(4))
        let bloomSize = Int(try gnu.u32(8))
        guard bucketCount < gnu.count, bloomSize < gnu.count else {
            throw ELFError.malformed(path: "", detail: "GNU hash table header is inconsistent")
        }
        let buckets = 16 + bloomSize * 8
        var highest = 0
        for index in 0..<bucketCount {
            highest = max(highest, Int(try gnu.u32(buckets + index * 4)))
        }
        guard highest >= symbolOffset else { return symbolOffset }
        let chains = buckets + bucketCount * 4
        var index = highest
        while true {
            let hash = try gnu.u32(chains + (index - symbolOffset) * 4)
            index += 1
            if hash & 1 != 0 { return index }
        }
    }

    struct Counts {
        var imported = 0
        var exported = 0
    }

    /// Undefined non-local symbols (imports) and defined global/weak symbols (exports).
    func importExportCounts() throws(ELFError) -> Counts {
        var counts = Counts()
        let bytes = symbols.bytes
        var offset = SymbolTable.entrySize  // entry 0 is the null symbol
        // The loop bound keeps each 24-byte entry inside the table.
        while offset + SymbolTable.entrySize <= bytes.count {
            let info = bytes[offset + 4]
            let sectionIndex = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
            if info >> 4 != 0 {  // not STB_LOCAL
                if sectionIndex == 0 {
                    counts.imported += 1
                } else {
                    counts.exported += 1
                }
            }
            offset += SymbolTable.entrySize
        }
        return counts
    }

    /// The value of the defined symbol `name`, through the GNU or SysV hash table.
    func lookup(_ name: String) throws(ELFError) -> UInt64? {
        let utf8 = Array(name.utf8)
        if let gnuHash {
            return try lookupGNU(utf8, gnuHash)
        }
        if let sysvHash {
            return try lookupSysV(utf8, sysvHash)
        }
        return try scan(utf8)
    }

    /// The value of symbol `index` when it is defined and named `name`.
    private func definedValue(_ index: Int, _ name: [UInt8]) throws(ELFError) -> UInt64? {
        let offset = index * SymbolTable.entrySize
        let nameOffset = Int(try symbols.u32(offset))
        guard strings.cStringEquals(nameOffset, name) else { return nil }
        guard try symbols.u16(offset + 6) != 0 else { return nil }
        return try symbols.u64(offset + 8)
    }

    private func lookupGNU(_ name: [UInt8], _ table: ByteView) throws(ELFError) -> UInt64? {
        var hash: UInt32 = 5381
        for byte in name { hash = hash &* 33 &+ UInt32(byte) }
        let bucketCount = Int(try table.u32(0))
        let symbolOffset = Int(try table.u32(4))
        let bloomSize = Int(try table.u32(8))
        guard bucketCount > 0, bloomSize < table.count else { return nil }
        let buckets = 16 + bloomSize * 8
        let chains = buckets + bucketCount * 4
        var index = Int(try table.u32(buckets + Int(hash % UInt32(bucketCount)) * 4))
        guard index != 0, index >= symbolOffset else { return nil }
        while index < count {
            let chainHash = try table.u32(chains + (index - symbolOffset) * 4)
            if chainHash | 1 == hash | 1, let value = try definedValue(index, name) {
                return value
            }
            if chainHash & 1 != 0 { break }
            index += 1
        }
        return nil
    }

    private func lookupSysV(_ name: [UInt8], _ table: ByteView) throws(ELFError) -> UInt64? {
        var hash: UInt32 = 0
        for byte in name {
            hash = (hash << 4) &+ UInt32(byte)
            let high = hash & 0xf000_0000
            if high != 0 { hash ^= high >> 24 }
            hash &= ~high
        }
        let bucketCount = Int(try table.u32(0))
        let chainCount = Int(try table.u32(4))
        guard bucketCount > 0 else { return nil }
        var index = Int(try table.u32(8 + Int(hash % UInt32(bucketCount)) * 4))
        var steps = 0
        // A corrupt chain may loop: never take more steps than there are symbols.
        while index != 0, index < count, steps <= min(chainCount, count) {
            if let value = try definedValue(index, name) { return value }
            index = Int(try table.u32(8 + bucketCount * 4 + index * 4))
            steps += 1
        }
        return nil
    }

    private func scan(_ name: [UInt8]) throws(ELFError) -> UInt64? {
        for index in 1..<max(count, 1) {
            if let value = try definedValue(index, name) { return value }
        }
        return nil
    }

    /// Every defined, named symbol and its value (for building a lookup table of .symtab).
    func forEachDefined(_ body: (String, UInt64, _ isGlobal: Bool) -> Void) throws(ELFError) {
        var offset = SymbolTable.entrySize
        while offset + SymbolTable.entrySize <= symbols.count {
            let nameOffset = Int(try symbols.u32(offset))
            let info = try symbols.u8(offset + 4)
            let sectionIndex = try symbols.u16(offset + 6)
            let type = info & 0xf
            // Functions, objects and untyped names; sections and files are not lookup targets.
            if nameOffset != 0, sectionIndex != 0, type <= 2 || type == 10 {
                body(try strings.cString(nameOffset), try symbols.u64(offset + 8), info >> 4 != 0)
            }
            offset += SymbolTable.entrySize
        }
    }
}
