// libFuzzer entry point for the parsers launchprof runs on untrusted bytes: the loader cache,
// ELF notes, dynamic sections, relocation tables, symbol hash tables, call frame information and
// the uprobe holder's messages (both directions). Built by Fuzz/run.sh, which compiles these
// sources together with the parser files of Sources/LaunchprofELF and the holder's protocol.

/// The first input byte picks the parser; the rest is its input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let view = ByteView(input)
    switch selector % 10 {
    case 9:
        // A stream of holder frames, each decoded as a request and as a reply.
        var reader = UprobeHolderProtocol.FrameReader()
        reader.append(UnsafeRawBufferPointer(input))
        while let payload = try? reader.next() {
            _ = try? UprobeHolderProtocol.decodeRequest(payload)
            _ = try? UprobeHolderProtocol.decodeReply(payload)
        }
    case 0:
        let cache = try? LoaderCache(bytes: Array(input))
        for name in ["libc.so.6", "libz.so.1", "libm.so.6", "a", "lib1.so.10"] {
            _ = cache?.lookup(name, hwcaps: ["x86-64-v3", "x86-64-v2"])
        }
    case 1, 2:
        _ = try? NoteParser.buildID(in: view, alignment: selector % 8 == 1 ? 4 : 8)
    case 3:
        // The input is both the dynamic section and (mapped at address 0) its string table.
        let segments = SegmentMap(segments: [.init(vaddr: 0, fileOffset: 0, fileSize: UInt64(input.count), memorySize: UInt64(input.count))])
        _ = try? DynamicSectionParser.parse(view) { (info) throws(ELFError) -> ByteView? in
            guard let strtab = info.strtab else { return nil }
            return try segments.viewToSegmentEnd(in: view, vaddr: strtab)
        }
    case 4, 5:
        var counts = RelocationCounts()
        let entrySize = selector % 8 == 4 ? 24 : 16
        let skip = input.count > 48 ? 24..<48 : nil
        let leading = input.isEmpty ? 0 : Int(input[0])
        try? RelocationTableParser.count(
            view, entrySize: entrySize, into: &counts, skipping: skip, leadingRelative: leading)
        _ = RelocationTableParser.firstTarget(view)
    case 6:
        _ = try? RelocationTableParser.countRELR(view)
    case 8:
        // .eh_frame_hdr followed by .eh_frame, loaded at `base`; rules around the table's first
        // function start and a few other addresses.
        let base: UInt64 = 0x20_0000
        guard let table = try? CallFrameTable(
            bytes: input, segments: [.init(vaddr: base, offset: 0, fileSize: UInt64(input.count))], ehFrameHeader: base)
        else { return 0 }
        let first = input.count >= 16 ? base &+ UInt64(bitPattern: Int64(input.loadUnaligned(fromByteOffset: 12, as: Int32.self))) : base
        for address in [first, first &+ 1, first &+ 17, first &+ 300, base &- 0x1000, base, 0, UInt64.max] {
            _ = try? table.rule(at: address)
            _ = try? table.function(containing: address)
        }
    default:
        // Split into symbols | strings | hash table at offsets taken from the first bytes.
        guard input.count >= 4 else { return 0 }
        let first = Int(input[0]) * 8 % input.count
        let second = max(first, Int(input[1]) * 16 % input.count)
        let symbols = ByteView(UnsafeRawBufferPointer(rebasing: input[2..<max(2, first)]))
        let strings = ByteView(UnsafeRawBufferPointer(rebasing: input[first..<second]))
        let hash = ByteView(UnsafeRawBufferPointer(rebasing: input[second...]))
        let useGNU = input[2] & 1 == 0
        let table = SymbolTable(
            symbols: symbols, strings: strings, gnuHash: useGNU ? hash : nil, sysvHash: useGNU ? nil : hash)
        _ = try? table.importExportCounts()
        _ = try? table.lookup("main")
        _ = try? table.lookup("_r_debug")
        _ = try? SymbolTable.symbolCount(gnuHash: useGNU ? hash : nil, sysvHash: useGNU ? nil : hash)
        try? table.forEachDefined { _, _, _ in }
    }
    return 0
}
