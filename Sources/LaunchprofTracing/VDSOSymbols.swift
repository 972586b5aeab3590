/// Finds symbols in the vDSO's image as read from the process's memory: it is a complete small
/// ELF file with section headers, so its `.dynsym` is found through them. Every read is bounds
/// checked (the bytes come from a tracee).
enum VDSOSymbols {
    /// The offsets (from the image's start) of the named symbols found.
    static func find(_ names: Set<String>, in bytes: [UInt8]) -> [(name: String, offset: UInt64)] {
        func u16(_ at: Int) -> Int? { at + 2 <= bytes.count ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : nil }
        func u32(_ at: Int) -> Int? {
            guard at + 4 <= bytes.count else { return nil }
            return (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
        }
        func u64(_ at: Int) -> UInt64? {
            guard at + 8 <= bytes.count else { return nil }
            return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
        }
        guard bytes.count > 64, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[4] == 2,
            let sectionOffset = u64(0x28).map(Int.init), let entrySize = u16(0x3a), let count = u16(0x3c),
            entrySize >= 64, sectionOffset < bytes.count
        else { return [] }
        func section(_ index: Int) -> (type: Int, offset: Int, size: Int, link: Int)? {
            let at = sectionOffset + index * entrySize
            guard let type = u32(at + 4), let offset = u64(at + 0x18), let size = u64(at + 0x20), let link = u32(at + 0x28),
                offset < UInt64(bytes.count), size <= UInt64(bytes.count)
            else { return nil }
            return (type, Int(offset), Int(size), link)
        }
        var found: [(String, UInt64)] = []
        for index in 0..<count {
            guard let symbols = section(index), symbols.type == 11 /* SHT_DYNSYM */,
                let strings = section(symbols.link)
            else { continue }
            var at = symbols.offset + 24
            while at + 24 <= min(symbols.offset + symbols.size, bytes.count) {
                if let nameOffset = u32(at), let value = u64(at + 8), value != 0 {
                    let start = strings.offset + nameOffset
                    if start < bytes.count {
                        let name = String(decoding: bytes[start...].prefix { $0 != 0 }, as: UTF8.self)
                        if names.contains(name) { found.append((name, value)) }
                    }
                }
                at += 24
            }
        }
        return found
    }
}
