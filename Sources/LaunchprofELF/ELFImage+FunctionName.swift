extension ELFImage {
    /// Where a function name came from.
    public enum SymbolSource: String, Sendable {
        case symtab
        case dynsym
    }

    /// The symbol at or before the unrelocated address `address`: from `.symtab` when the file
    /// has one, else from `.dynsym` (a stripped file keeps only its exported names, so the name
    /// may be the nearest export before a local function). Nil when neither names it.
    public func functionName(containing address: UInt64) -> (name: String, source: SymbolSource)? {
        if let location = backing.staticSymbols, let name = nearest(location, address) {
            return (name, .symtab)
        }
        if let location = backing.dynamicSymbols, let name = nearest(location, address) {
            return (name, .dynsym)
        }
        return nil
    }

    private func nearest(_ location: ELFBacking.SymbolTableLocation, _ address: UInt64) -> String? {
        guard let table = backing.symbolTable(location) else { return nil }
        var best: (name: String, value: UInt64)?
        try? table.forEachDefined { name, value, _ in
            guard value != 0, value <= address else { return }
            if value >= (best?.value ?? 0) { best = (name, value) }
        }
        return best?.name
    }
}
