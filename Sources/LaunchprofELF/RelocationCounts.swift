/// How many relocations of each kind an object asks the loader to apply (x86-64).
public struct RelocationCounts: Sendable, Equatable {
    /// R_X86_64_RELATIVE (and RELATIVE64) entries plus every address a DT_RELR table encodes.
    public var relative = 0
    /// Of `relative`, how many come from DT_RELR.
    public var relativeFromRELR = 0
    /// R_X86_64_GLOB_DAT and R_X86_64_64: a symbol lookup each.
    public var symbolic = 0
    /// R_X86_64_JUMP_SLOT: a lookup each at start-up when bound now, else on first call.
    public var jumpSlot = 0
    /// R_X86_64_DTPMOD64, DTPOFF64, TPOFF64, TLSDESC.
    public var tls = 0
    /// R_X86_64_COPY.
    public var copy = 0
    /// R_X86_64_IRELATIVE: an IFUNC resolver call each.
    public var irelative = 0
    /// Anything else (R_X86_64_NONE, PC32, …).
    public var other = 0

    public init() {}

    public var total: Int { relative + symbolic + jumpSlot + tls + copy + irelative + other }

    public static func + (lhs: RelocationCounts, rhs: RelocationCounts) -> RelocationCounts {
        var sum = lhs
        sum.relative += rhs.relative
        sum.relativeFromRELR += rhs.relativeFromRELR
        sum.symbolic += rhs.symbolic
        sum.jumpSlot += rhs.jumpSlot
        sum.tls += rhs.tls
        sum.copy += rhs.copy
        sum.irelative += rhs.irelative
        sum.other += rhs.other
        return sum
    }

    /// Counts `count` relocations of x86-64 type `type`.
    mutating func add(type: UInt32, count: Int = 1) {
        switch type {
        case 8, 38: relative += count
        case 1, 6: symbolic += count
        case 7: jumpSlot += count
        case 16, 17, 18, 36: tls += count
        case 5: copy += count
        case 37: irelative += count
        default: other += count
        }
    }
}

/// Counts entries of relocation tables (DT_RELA, DT_REL, DT_JMPREL, DT_RELR).
enum RelocationTableParser {
    /// Counts a REL or RELA table with entries of `entrySize` bytes (r_info at offset 8).
    /// Entries whose position falls in `skipping` (a byte range of the same table) are left
    /// out, for the common case where DT_RELASZ also covers the PLT relocations.
    ///
    /// The first `leadingRelative` entries are counted as relative without being read: the
    /// linker sorts relative relocations first and records their number in DT_RELACOUNT, and
    /// glibc applies that many as relative without looking at their type either.
    static func count(
        _ table: ByteView, entrySize: Int, into counts: inout RelocationCounts, skipping: Range<Int>? = nil,
        leadingRelative: Int = 0
    ) throws(ELFError) {
        guard entrySize >= 16 else {
            throw ELFError.malformed(path: "", detail: "relocation entry size \(entrySize) is too small")
        }
        // Tables hold up to hundreds of thousands of entries: read r_info directly, the loop
        // bounds keep every read inside the table.
        let bytes = table.bytes
        // Tally per type number first (x86-64 types are below 64), classify once at the end.
        var perType = [Int](repeating: 0, count: 64)
        let entries = bytes.count / entrySize
        var leading = min(max(leadingRelative, 0), entries)
        if let skipping, skipping.lowerBound < leading * entrySize { leading = skipping.lowerBound / entrySize }
        counts.relative += leading
        var offset = leading * entrySize
        while offset + entrySize <= bytes.count {
            if let skipping, skipping.contains(offset) {
                offset = max(offset + entrySize, skipping.upperBound)
                continue
            }
            let info = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            let type = UInt32(truncatingIfNeeded: info)
            if type < 64 {
                perType[Int(type)] += 1
            } else {
                counts.other += 1
            }
            offset += entrySize
        }
        for (type, count) in perType.enumerated() where count > 0 {
            counts.add(type: UInt32(type), count: count)
        }
    }

    /// r_offset of the table's first entry.
    static func firstTarget(_ table: ByteView) -> UInt64? {
        try? table.u64(0)
    }

    /// Counts the addresses a DT_RELR table encodes (an even word is one address; an odd word
    /// is a bitmap of up to 63 following words) and returns the first address.
    static func countRELR(_ table: ByteView) throws(ELFError) -> (count: Int, firstAddress: UInt64?) {
        var count = 0
        var first: UInt64?
        var offset = 0
        while offset + 8 <= table.count {
            let word = try table.u64(offset)
            if word & 1 == 0 {
                if first == nil { first = word }
                count += 1
            } else {
                count += (word >> 1).nonzeroBitCount
            }
            offset += 8
        }
        return (count, first)
    }
}
