/// What the loader will have written into an object's pointer slots, read from the file alone,
/// so an observer can place probes on initializers without reading the process's memory.
extension ELFImage {
    /// The file offset that backs virtual address `address`, as the loader maps the file (what a
    /// uprobe needs: it names a file and an offset, not an address).
    public func fileOffset(ofAddress address: UInt64) -> UInt64? {
        segments.fileOffset(of: address)
    }

    /// Up to `count` bytes of the file mapped at virtual address `address` (fewer at a
    /// segment's end; empty when no segment maps it), read from the file itself (see
    /// `ELFBacking.readBytes`): code bytes, as no uprobe has changed them.
    public func bytes(atAddress address: UInt64, count: Int) -> [UInt8] {
        guard let view = try? segments.viewToSegmentEnd(in: backing.view, vaddr: address),
            let offset = segments.fileOffset(of: address)
        else { return [] }
        return backing.readBytes(offset: offset, count: min(max(count, 0), view.count))
    }

    /// The unrelocated address the pointer slot at `slot` (an entry of DT_INIT_ARRAY, say) holds
    /// once the loader has relocated the object: a R_X86_64_RELATIVE entry's addend, else the
    /// file's own word (DT_RELR keeps the addend in place; a fixed-address program needs no
    /// relocation). Nil when another relocation (a symbol's) decides the value.
    public func relocatedPointer(atSlot slot: UInt64) -> UInt64? {
        let dynamic = self.dynamic
        let view = backing.view
        for (address, size, entrySize) in [
            (dynamic.rela, dynamic.relasz, dynamic.relaent), (dynamic.jmprel, dynamic.pltrelsz, UInt64(24)),
        ] {
            guard let address, size > 0, entrySize >= 24,
                dynamic.pltrel == 7 || address == dynamic.rela,
                let table = try? segments.view(in: view, vaddr: address, length: size)
            else { continue }
            var offset = 0
            while offset + Int(entrySize) <= table.count {
                if let target = try? table.u64(offset), target == slot {
                    let type = UInt32(truncatingIfNeeded: (try? table.u64(offset + 8)) ?? 0)
                    guard type == 8 /* R_X86_64_RELATIVE */, let addend = try? table.u64(offset + 16) else { return nil }
                    return addend
                }
                offset += Int(entrySize)
            }
        }
        // REL tables (no addend) are not used on x86-64; a slot without a RELA entry holds its
        // final unrelocated value in the file (DT_RELR or a fixed-address program).
        if dynamic.rel != nil, dynamic.relsz > 0 { return nil }
        guard let word = try? segments.view(in: view, vaddr: slot, length: 8).u64(0) else { return nil }
        if kind == .sharedObject || kind == .pie || kind == .staticPIE {
            return relrCovers(slot) ? word : nil
        }
        return word
    }

    /// Whether the object's DT_RELR table relocates the word at `slot`.
    func relrCovers(_ slot: UInt64) -> Bool {
        guard let relr = dynamic.relr, dynamic.relrsz > 0,
            let table = try? segments.view(in: backing.view, vaddr: relr, length: dynamic.relrsz)
        else { return false }
        var next: UInt64 = 0
        var offset = 0
        while offset + 8 <= table.count {
            guard let word = try? table.u64(offset) else { return false }
            if word & 1 == 0 {
                if word == slot { return true }
                next = word &+ 8
            } else {
                // A bitmap: bit i (from 1) relocates next + (i − 1) × 8; 63 words per bitmap.
                var bits = word >> 1
                var address = next
                while bits != 0 {
                    if bits & 1 != 0, address == slot { return true }
                    bits >>= 1
                    address &+= 8
                }
                next &+= 63 * 8
            }
            offset += 8
        }
        return false
    }
}
