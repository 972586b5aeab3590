#if canImport(Glibc)
import Glibc
#endif

extension ELFImage {
    private static let ptLoad: UInt32 = 1
    private static let ptDynamic: UInt32 = 2
    private static let ptInterp: UInt32 = 3
    private static let ptNote: UInt32 = 4
    private static let ptTLS: UInt32 = 7

    /// Decodes the mapped file with launchprof's own parsers (section headers are read, through
    /// libelf, only by what asks for them: `isStripped`, .symtab's symbols).
    static func decode(_ file: ELFBacking, path: String, realPath: String) throws(ELFError) -> ELFImage {
        let headers = try file.headers(path: path)
        let view = file.view
        var segments = SegmentMap(segments: [])
        var interpreter: String?
        var dynamicHeader: ELFHeaders.ProgramHeader?
        var buildID: String?
        var tlsSize: UInt64 = 0
        for header in headers.programHeaders {
            switch header.type {
            case ptLoad:
                guard view.contains(offset: header.offset, length: header.fileSize) else {
                    throw ELFError.truncated(
                        path: path, detail: "a loadable segment ends at byte \(header.offset &+ header.fileSize) of \(view.count)")
                }
                segments.segments.append(
                    .init(vaddr: header.vaddr, fileOffset: header.offset, fileSize: header.fileSize,
                          memorySize: header.memorySize))
            case ptInterp:
                interpreter = try view.slice(offset: header.offset, length: header.fileSize).cString(0)
            case ptDynamic:
                dynamicHeader = header
            case ptNote where buildID == nil:
                let notes = try view.slice(offset: header.offset, length: header.fileSize)
                buildID = try NoteParser.buildID(in: notes, alignment: header.alignment)
            case ptTLS:
                tlsSize = header.memorySize
            default:
                break
            }
        }

        var dynamic = DynamicInfo()
        var relocations = RelocationCounts()
        var firstTarget: UInt64?
        if let dynamicHeader {
            file.hasDynamic = true
            let section = try view.slice(offset: dynamicHeader.offset, length: dynamicHeader.fileSize)
            dynamic = try DynamicSectionParser.parse(section) { (info) throws(ELFError) -> ByteView? in
                guard let strtab = info.strtab else { return nil }
                return try segments.viewToSegmentEnd(in: view, vaddr: strtab)
            }
            (relocations, firstTarget) = try countRelocations(dynamic, segments: segments, view: view)
        }

        file.dynamicSymbols = try dynamicSymbolLocation(dynamic, file: file, segments: segments)
        var symbolCounts = SymbolTable.Counts()
        if let location = file.dynamicSymbols, let table = file.symbolTable(location) {
            symbolCounts = try table.importExportCounts()
        }

        let kind: ELFKind
        switch headers.type {
        case 2:
            kind = interpreter == nil ? .staticExecutable : .executable
        case 3:
            if dynamic.isPIE {
                kind = interpreter == nil ? .staticPIE : .pie
            } else {
                // Old PIEs lack DF_1_PIE: an interpreter and no soname mark them.
                kind = interpreter != nil && dynamic.soname == nil ? .pie : .sharedObject
            }
        default:
            throw ELFError.malformed(path: path, detail: "ELF type \(headers.type) is neither a program nor a shared object")
        }

        return ELFImage(
            path: realPath, openedPath: path, fileSize: UInt64(view.count), elfClass: "ELF64",
            machine: "x86-64", kind: kind, interpreter: interpreter, buildID: buildID, entry: headers.entry,
            dynamic: dynamic, relocations: relocations, firstRelocationTarget: firstTarget,
            tlsSize: tlsSize, importedSymbolCount: symbolCounts.imported,
            exportedSymbolCount: symbolCounts.exported, fileID: file.fileID, backing: file,
            segments: segments)
    }

    /// Counts every relocation table the loader applies, and finds the first target it writes.
    private static func countRelocations(_ dynamic: DynamicInfo, segments: SegmentMap, view: ByteView)
        throws(ELFError) -> (RelocationCounts, UInt64?)
    {
        var counts = RelocationCounts()
        var first: UInt64?
        if let relr = dynamic.relr, dynamic.relrsz > 0 {
            let table = try segments.view(in: view, vaddr: relr, length: dynamic.relrsz)
            let (count, address) = try RelocationTableParser.countRELR(table)
            counts.relative += count
            counts.relativeFromRELR += count
            first = address
        }
        let plt = dynamic.jmprel.map { $0..<($0 &+ dynamic.pltrelsz) }
        for (address, size, entrySize, leading) in [
            (dynamic.rela, dynamic.relasz, Int(dynamic.relaent), dynamic.relaCount),
            (dynamic.rel, dynamic.relsz, Int(dynamic.relent), dynamic.relCount),
        ] {
            guard let address, size > 0 else { continue }
            let table = try segments.view(in: view, vaddr: address, length: size)
            // DT_RELASZ may cover the PLT relocations too; those are counted from DT_JMPREL.
            var skipping: Range<Int>?
            if let plt, plt.lowerBound >= address, plt.lowerBound < address &+ size {
                let start = Int(plt.lowerBound - address)
                skipping = start..<(start + Int(min(dynamic.pltrelsz, size - (plt.lowerBound - address))))
            }
            try RelocationTableParser.count(
                table, entrySize: entrySize, into: &counts, skipping: skipping,
                leadingRelative: Int(clamping: leading))
            if first == nil { first = RelocationTableParser.firstTarget(table) }
        }
        if let jmprel = dynamic.jmprel, dynamic.pltrelsz > 0 {
            let table = try segments.view(in: view, vaddr: jmprel, length: dynamic.pltrelsz)
            let entrySize = dynamic.pltrel == 17 ? 16 : 24
            try RelocationTableParser.count(table, entrySize: entrySize, into: &counts)
            if first == nil { first = RelocationTableParser.firstTarget(table) }
        }
        return (counts, first)
    }

    /// Where .dynsym and its string and hash tables are, from the dynamic section as the loader
    /// finds them; the symbol count from a hash table (the same as .dynsym's section size in
    /// each of 1,356 system files), else from the section.
    private static func dynamicSymbolLocation(
        _ dynamic: DynamicInfo, file: ELFBacking, segments: SegmentMap
    ) throws(ELFError) -> ELFBacking.SymbolTableLocation? {
        let view = file.view
        guard let symtab = dynamic.symtab, let strtab = dynamic.strtab else { return nil }
        func range(_ slice: ByteView) -> Range<Int> {
            // Slices of the mapped file: their offset is the distance between base addresses.
            guard let base = view.bytes.baseAddress, let address = slice.bytes.baseAddress else { return 0..<0 }
            let start = address - base
            return start..<(start + slice.count)
        }
        let gnuHash = try dynamic.gnuHash.map { (address) throws(ELFError) in
            try segments.viewToSegmentEnd(in: view, vaddr: address)
        }
        let sysvHash = try dynamic.sysvHash.map { (address) throws(ELFError) in
            try segments.viewToSegmentEnd(in: view, vaddr: address)
        }
        let symbolBytes: Int
        if let count = try SymbolTable.symbolCount(gnuHash: gnuHash, sysvHash: sysvHash) {
            symbolBytes = count * SymbolTable.entrySize
        } else if let section = file.sections().first(where: { $0.type == ELFBacking.shtDynsym }) {
            symbolBytes = Int(section.size)
        } else {
            return nil
        }
        let symbols = try segments.view(in: view, vaddr: symtab, length: UInt64(symbolBytes))
        let strings: ByteView
        if dynamic.strsz > 0 {
            strings = try segments.view(in: view, vaddr: strtab, length: dynamic.strsz)
        } else {
            strings = try segments.viewToSegmentEnd(in: view, vaddr: strtab)
        }
        return .init(
            symbols: range(symbols), strings: range(strings), gnuHash: gnuHash.map(range),
            sysvHash: sysvHash.map(range))
    }
}
