#if canImport(Glibc)
import Glibc
#endif

/// What naming and unwinding the frames of one object need from its file: its loadable
/// segments, its `.eh_frame_hdr`, its build-id, and its functions by address, from `.symtab`
/// (or a separate debug file found by build-id under `/usr/lib/debug/.build-id`), else `.dynsym`.
///
/// Works on any ELF file with section headers, a debug file included (whose segments carry no
/// bytes), so it does not need `ELFImage`'s full decode. The file stays mapped while this lives.
public final class ObjectSymbols: @unchecked Sendable {
    /// One PT_LOAD: file bytes at `offset` appear at `vaddr` (plus the load bias).
    public struct Segment: Sendable, Equatable {
        public var vaddr: UInt64
        public var offset: UInt64
        public var fileSize: UInt64
        public var executable: Bool
    }

    /// One function symbol.
    public struct Function: Sendable, Equatable {
        public var start: UInt64
        public var size: UInt64
        public var name: String
    }

    /// Where the names came from.
    public enum Source: String, Sendable {
        case symtab, debugFile, dynsym, none
    }

    public let path: String
    public let buildID: String?
    public let segments: [Segment]
    /// PT_GNU_EH_FRAME's vaddr, when present.
    public let ehFrameHeader: UInt64?
    public let source: Source
    /// Sorted by start.
    public let functions: [Function]
    private let backing: ELFBacking
    private let debugBacking: ELFBacking?

    /// The file's bytes, mapped (valid while this object lives).
    public var bytes: UnsafeRawBufferPointer { backing.bytes }

    private static let ptLoad: UInt32 = 1
    private static let ptNote: UInt32 = 4
    private static let ptGNUEHFrame: UInt32 = 0x6474_e550

    private init(
        path: String, buildID: String?, segments: [Segment], ehFrameHeader: UInt64?, source: Source,
        functions: [Function], backing: ELFBacking, debugBacking: ELFBacking?
    ) {
        self.path = path
        self.buildID = buildID
        self.segments = segments
        self.ehFrameHeader = ehFrameHeader
        self.source = source
        self.functions = functions
        self.backing = backing
        self.debugBacking = debugBacking
    }

    /// Reads `path`; `debugRoot` is where separate debug files are looked up by build-id.
    public static func load(path: String, debugRoot: String = "/usr/lib/debug") throws(ELFError) -> ObjectSymbols {
        let backing = try ELFBacking.open(path)
        let headers = try backing.headers(path: path)
        let view = backing.view
        var segments: [Segment] = []
        var ehFrameHeader: UInt64?
        var buildID: String?
        for header in headers.programHeaders {
            switch header.type {
            case ptLoad:
                segments.append(Segment(
                    vaddr: header.vaddr, offset: header.offset, fileSize: header.fileSize,
                    executable: true))
            case ptGNUEHFrame:
                ehFrameHeader = header.vaddr
            case ptNote where buildID == nil:
                if header.offset &+ header.fileSize <= UInt64(view.count) {
                    let notes = ByteView(UnsafeRawBufferPointer(
                        rebasing: view.bytes[Int(header.offset)..<Int(header.offset + header.fileSize)]))
                    buildID = try? NoteParser.buildID(in: notes, alignment: header.alignment)
                }
            default: break
            }
        }
        // Which segments are executable (p_flags is not in ELFHeaders): read them from the file.
        let phoff = Int((try? view.u64(32)) ?? 0)
        let phentsize = Int((try? view.u16(54)) ?? 0)
        var loadIndex = 0
        for (index, header) in headers.programHeaders.enumerated() where header.type == ptLoad {
            if let flags = try? view.u32(phoff + index * phentsize + 4) {
                segments[loadIndex].executable = flags & 1 != 0
            }
            loadIndex += 1
        }

        var source = Source.none
        var functions: [Function] = []
        var debugBacking: ELFBacking?
        if let table = symbolTable(backing, type: ELFBacking.shtSymtab) {
            functions = collect(table)
            source = .symtab
        }
        if functions.isEmpty, let buildID, buildID.count > 2,
            let debug = try? ELFBacking.open(
                "\(debugRoot)/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug"),
            let table = symbolTable(debug, type: ELFBacking.shtSymtab)
        {
            functions = collect(table)
            if !functions.isEmpty {
                source = .debugFile
                debugBacking = debug
            }
        }
        if functions.isEmpty, let table = symbolTable(backing, type: ELFBacking.shtDynsym) {
            functions = collect(table)
            if !functions.isEmpty { source = .dynsym }
        }
        return ObjectSymbols(
            path: path, buildID: buildID, segments: segments, ehFrameHeader: ehFrameHeader,
            source: source, functions: functions, backing: backing, debugBacking: debugBacking)
    }

    private static func symbolTable(_ backing: ELFBacking, type: UInt32) -> SymbolTable? {
        backing.symbolSection(type: type).flatMap(backing.symbolTable)
    }

    /// Defined functions (STT_FUNC, STT_GNU_IFUNC), sorted, one per address (a global name wins).
    private static func collect(_ table: SymbolTable) -> [Function] {
        var found: [(Function, Bool)] = []
        var offset = SymbolTable.entrySize
        while offset + SymbolTable.entrySize <= table.symbols.count {
            defer { offset += SymbolTable.entrySize }
            guard let nameOffset = try? table.symbols.u32(offset), nameOffset != 0,
                let info = try? table.symbols.u8(offset + 4),
                let section = try? table.symbols.u16(offset + 6), section != 0,
                let value = try? table.symbols.u64(offset + 8), value != 0,
                let size = try? table.symbols.u64(offset + 16)
            else { continue }
            let type = info & 0xf
            guard type == 2 || type == 10, let name = try? table.strings.cString(Int(nameOffset)) else { continue }
            found.append((Function(start: value, size: size, name: name), info >> 4 != 0))
        }
        found.sort { ($0.0.start, $0.1 ? 0 : 1) < ($1.0.start, $1.1 ? 0 : 1) }
        var result: [Function] = []
        result.reserveCapacity(found.count)
        for (function, _) in found where result.last?.start != function.start {
            result.append(function)
        }
        return result
    }

    /// The function containing `vaddr` (an unrelocated address of this object).
    public func function(containing vaddr: UInt64) -> Function? {
        var low = 0
        var high = functions.count
        while low < high {
            let middle = (low + high) / 2
            if functions[middle].start <= vaddr { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        // A symbol without a size (`_init`, assembly labels) would swallow what follows it (the
        // PLT): such addresses are named by their call frame information instead.
        let candidate = functions[low - 1]
        return vaddr < candidate.start &+ candidate.size ? candidate : nil
    }

    /// Where the function holding `vaddr` starts according to the call frame information (its
    /// FDE, read by the sampler's `CallFrameTable`): names a frame of a stripped object as
    /// `object+0xstart`, the same for every sample in the function.
    public func cfiFunctionStart(containing vaddr: UInt64) -> UInt64? {
        guard let table = (try? CallFrameTable(object: self)) ?? nil else { return nil }
        return (try? table.function(containing: vaddr))??.lowerBound
    }

    private func fileOffset(ofVirtualAddress vaddr: UInt64) -> Int? {
        for segment in segments where segment.vaddr <= vaddr && vaddr < segment.vaddr &+ segment.fileSize {
            return Int(segment.offset &+ (vaddr &- segment.vaddr))
        }
        return nil
    }

    /// The unrelocated address that the file offset `offset` is loaded at.
    public func virtualAddress(ofFileOffset offset: UInt64) -> UInt64? {
        for segment in segments where segment.offset <= offset && offset < segment.offset &+ max(segment.fileSize, 1) {
            return segment.vaddr &+ (offset &- segment.offset)
        }
        return nil
    }

    /// Up to `count` file bytes at the unrelocated address `vaddr`; empty when not in the file.
    public func bytes(atVirtualAddress vaddr: UInt64, count: Int) -> [UInt8] {
        for segment in segments where segment.vaddr <= vaddr && vaddr &+ UInt64(count) <= segment.vaddr &+ segment.fileSize {
            let offset = Int(segment.offset &+ (vaddr &- segment.vaddr))
            guard offset + count <= backing.bytes.count else { return [] }
            return Array(backing.bytes[offset..<(offset + count)])
        }
        return []
    }
}
