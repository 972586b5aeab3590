/// Decodes a `.dynamic` section (an array of Elf64_Dyn tag/value pairs ending at DT_NULL).
enum DynamicSectionParser {
    /// Parses the entries; strings (DT_NEEDED, DT_SONAME, paths) are resolved through `strings`,
    /// a view of the string table or nil when the table cannot be located.
    static func parse(_ section: ByteView, strings: (DynamicInfo) throws(ELFError) -> ByteView?)
        throws(ELFError) -> DynamicInfo
    {
        var info = DynamicInfo()
        var neededOffsets: [UInt64] = []
        var sonameOffset: UInt64?
        var rpathOffset: UInt64?
        var runpathOffset: UInt64?
        var initArraySize: UInt64?
        var preinitArraySize: UInt64?
        var finiArraySize: UInt64?
        var initArrayAddress: UInt64?
        var preinitArrayAddress: UInt64?
        var finiArrayAddress: UInt64?
        var offset = 0
        while offset + 16 <= section.count {
            let tag = try section.u64(offset)
            let value = try section.u64(offset + 8)
            offset += 16
            switch tag {
            case 0: offset = section.count  // DT_NULL
            case 1: neededOffsets.append(value)
            case 3: info.pltGOT = value
            case 4: info.sysvHash = value
            case 5: info.strtab = value
            case 6: info.symtab = value
            case 7: info.rela = value
            case 8: info.relasz = value
            case 9: info.relaent = value
            case 10: info.strsz = value
            case 11: info.syment = value
            case 12: info.initAddress = value
            case 13: info.finiAddress = value
            case 14: sonameOffset = value
            case 15: rpathOffset = value
            case 17: info.rel = value
            case 18: info.relsz = value
            case 19: info.relent = value
            case 20: info.pltrel = value
            case 23: info.jmprel = value
            case 24: info.bindNow = true  // DT_BIND_NOW
            case 2: info.pltrelsz = value
            case 25: initArrayAddress = value
            case 26: finiArrayAddress = value
            case 27: initArraySize = value
            case 28: finiArraySize = value
            case 29: runpathOffset = value
            case 30: info.flags = value
            case 32: preinitArrayAddress = value
            case 33: preinitArraySize = value
            case 35: info.relrsz = value
            case 36: info.relr = value
            case 37: info.relrent = value
            case 0x6fff_fef5: info.gnuHash = value
            case 0x6fff_fff9: info.relaCount = value  // DT_RELACOUNT
            case 0x6fff_fffa: info.relCount = value  // DT_RELCOUNT
            case 0x6fff_fffb: info.flags1 = value
            case 16: info.symbolic = true  // DT_SYMBOLIC
            case 0x6fff_fffe: info.verneed = value  // DT_VERNEED
            case 0x6fff_ffff: info.verneedNum = value  // DT_VERNEEDNUM
            case 0x6fff_fff0: info.versym = value  // DT_VERSYM
            default: break
            }
        }
        if info.flags & 0x8 != 0 || info.flags1 & 0x1 != 0 { info.bindNow = true }
        if info.flags & 0x2 != 0 { info.symbolic = true }  // DF_SYMBOLIC
        info.hasGNUHash = info.gnuHash != nil
        info.hasSysVHash = info.sysvHash != nil
        info.initArray = array(initArrayAddress, initArraySize)
        info.preinitArray = array(preinitArrayAddress, preinitArraySize)
        info.finiArray = array(finiArrayAddress, finiArraySize)

        let needsStrings = !neededOffsets.isEmpty || sonameOffset != nil || rpathOffset != nil
            || runpathOffset != nil
        guard needsStrings else { return info }
        guard let table = try strings(info) else {
            throw ELFError.malformed(path: "", detail: "dynamic string table (DT_STRTAB) is missing or outside the file")
        }
        func string(_ offset: UInt64) throws(ELFError) -> String {
            guard offset < UInt64(table.count) else {
                throw ELFError.malformed(path: "", detail: "dynamic string offset \(offset) is outside the string table")
            }
            return try table.cString(Int(offset))
        }
        info.needed.reserveCapacity(neededOffsets.count)
        for needed in neededOffsets {
            info.needed.append(try string(needed))
        }
        if let sonameOffset { info.soname = try string(sonameOffset) }
        if let rpathOffset { info.rpath = try string(rpathOffset) }
        if let runpathOffset { info.runpath = try string(runpathOffset) }
        return info
    }

    private static func array(_ address: UInt64?, _ size: UInt64?) -> DynamicInfo.AddressArray? {
        guard let address else { return nil }
        let count = Int(clamping: (size ?? 0) / 8)
        return DynamicInfo.AddressArray(vaddr: address, count: count)
    }
}
