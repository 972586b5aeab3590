extension ELFImage {
    /// Where a function name came from.
    public enum SymbolSource: String, Sendable {
        case symtab
        case dynsym
    }

    /// The function containing the unrelocated address `address`: from `.symtab` when the file
    /// has one, else from `.dynsym`. A sized symbol must contain the address (in a stripped
    /// file a local function after an export is not that export); an unsized one is taken when
    /// it is the nearest before it. Nil when neither table names it.
    public func functionName(containing address: UInt64) -> (name: String, source: SymbolSource)? {
        if let location = backing.staticSymbols, let name = containing(location, address) {
            return (name, .symtab)
        }
        if let location = backing.dynamicSymbols, let name = containing(location, address) {
            return (name, .dynsym)
        }
        return nil
    }

    private func containing(_ location: ELFBacking.SymbolTableLocation, _ address: UInt64) -> String? {
        guard let table = backing.symbolTable(location) else { return nil }
        var best: (nameOffset: Int, value: UInt64, size: UInt64)?
        var offset = SymbolTable.entrySize
        while offset + SymbolTable.entrySize <= table.symbols.count {
            defer { offset += SymbolTable.entrySize }
            guard let info = try? table.symbols.u8(offset + 4), info & 0xf == 2 /* STT_FUNC */,
                let section = try? table.symbols.u16(offset + 6), section != 0,
                let value = try? table.symbols.u64(offset + 8), value != 0, value <= address,
                let size = try? table.symbols.u64(offset + 16),
                let nameOffset = try? table.symbols.u32(offset)
            else { continue }
            if size > 0, address >= value &+ size { continue }
            if value >= (best?.value ?? 0) { best = (Int(nameOffset), value, size) }
        }
        guard let best else { return nil }
        return try? table.strings.cString(best.nameOffset)
    }
}
