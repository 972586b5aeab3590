/// An object's x86-64 call frame information: `.eh_frame`, found through `.eh_frame_hdr`
/// (PT_GNU_EH_FRAME), whose sorted table leads to the frame description entry (FDE) of an
/// address; the FDE and its common information entry (CIE) are parsed and their instructions run
/// to give the rule there (`CallFrameRule`). Without a searchable table, `.eh_frame` is scanned
/// once and its FDEs sorted.
///
/// Every read is bounds-checked: damaged bytes give an `ELFError`, never a trap. Addresses are
/// the object's own (unrelocated). The bytes must outlive the table (`init(object:)` keeps the
/// object alive).
public struct CallFrameTable: @unchecked Sendable {
    /// A file range loaded at `vaddr` (a PT_LOAD's file part).
    public struct Segment: Sendable, Equatable {
        public var vaddr: UInt64
        public var offset: UInt64
        public var fileSize: UInt64

        public init(vaddr: UInt64, offset: UInt64, fileSize: UInt64) {
            self.vaddr = vaddr
            self.offset = offset
            self.fileSize = fileSize
        }
    }

    private let file: ByteView
    private let segments: [Segment]
    private let header: UInt64
    /// `.eh_frame`'s address.
    private let frames: UInt64
    /// The binary search table (pairs of data-relative sdata4: a function's start, its FDE), or
    /// nil when the header has none in that encoding (then `scanned` holds the FDEs by start).
    private let table: (address: UInt64, count: Int)?
    private let scanned: [(start: UInt64, entry: UInt64)]
    private let owner: AnyObject?

    /// `bytes` is the whole file; `ehFrameHeader` the address of `.eh_frame_hdr`.
    public init(bytes: UnsafeRawBufferPointer, segments: [Segment], ehFrameHeader: UInt64, owner: AnyObject? = nil) throws(ELFError) {
        file = ByteView(bytes)
        self.segments = segments
        header = ehFrameHeader
        self.owner = owner
        var cursor = try Self.cursor(file, segments, at: ehFrameHeader)
        let version = try cursor.u8()
        guard version == 1 else { throw cursor.malformed(".eh_frame_hdr version \(version), not 1") }
        let framesEncoding = try cursor.u8()
        let countEncoding = try cursor.u8()
        let tableEncoding = try cursor.u8()
        frames = try cursor.pointer(framesEncoding, dataBase: ehFrameHeader)
        // Linkers write the table as data-relative sdata4 (0x3b) or leave it out.
        if countEncoding != CallFrameCursor.omitted, tableEncoding == 0x3b {
            let count = try cursor.pointer(countEncoding, dataBase: ehFrameHeader)
            let tableAddress = cursor.address
            guard count <= UInt64(cursor.end - cursor.offset) / 8 else {
                throw cursor.malformed(".eh_frame_hdr's table of \(count) entries runs past its segment")
            }
            table = (tableAddress, Int(count))
            scanned = []
        } else {
            table = nil
            scanned = try Self.scan(file, segments, frames: frames)
        }
    }

    /// The rule at `address`, nil when no FDE covers it.
    public func rule(at address: UInt64) throws(ELFError) -> CallFrameRule? {
        guard let entry = try entry(covering: address) else { return nil }
        return try rule(at: address, entry: entry)
    }

    /// The range of the function (FDE) holding `address`, nil when none does.
    public func function(containing address: UInt64) throws(ELFError) -> Range<UInt64>? {
        guard let entry = try entry(covering: address) else { return nil }
        var cursor = try Self.cursor(file, segments, at: entry)
        let parsed = try parseDescription(&cursor)
        guard parsed.start <= address, address < parsed.end else { return nil }
        return parsed.start..<parsed.end
    }

    // MARK: Finding the entry

    /// The FDE address of the last table entry starting at or before `address`.
    private func entry(covering address: UInt64) throws(ELFError) -> UInt64? {
        guard let table else {
            var low = 0
            var high = scanned.count
            while low < high {
                let middle = (low + high) / 2
                if scanned[middle].start <= address { low = middle + 1 } else { high = middle }
            }
            return low > 0 ? scanned[low - 1].entry : nil
        }
        let first = try Self.cursor(file, segments, at: table.address).offset
        func start(_ index: Int) throws(ELFError) -> UInt64 {
            header &+ UInt64(bitPattern: Int64(Int32(bitPattern: try file.u32(first + index * 8))))
        }
        var low = 0
        var high = table.count
        while low < high {
            let middle = (low + high) / 2
            if try start(middle) <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        return header &+ UInt64(bitPattern: Int64(Int32(bitPattern: try file.u32(first + (low - 1) * 8 + 4))))
    }

    /// Every FDE of `.eh_frame` by start, for objects whose header has no table.
    private static func scan(_ file: ByteView, _ segments: [Segment], frames: UInt64) throws(ELFError) -> [(start: UInt64, entry: UInt64)] {
        var cursor = try cursor(file, segments, at: frames)
        var found: [(start: UInt64, entry: UInt64)] = []
        var encodings: [UInt64: UInt8] = [:]
        while !cursor.isAtEnd {
            let entry = cursor.address
            let (length, idAddress, id, is64) = try entryHeader(&cursor)
            if length == 0 { break }  // the terminator
            let bodyEnd = try checkedEnd(cursor, idAddress: idAddress, length: length, is64: is64)
            if id != 0 {
                let cie = idAddress &- id
                let encoding: UInt8
                if let known = encodings[cie] {
                    encoding = known
                } else {
                    var cieCursor = try Self.cursor(file, segments, at: cie)
                    encoding = try CommonInformationEntry.parse(&cieCursor).pointerEncoding
                    encodings[cie] = encoding
                }
                found.append((try cursor.pointer(encoding), entry))
            }
            cursor.offset = bodyEnd
        }
        return found.sorted { $0.start < $1.start }
    }

    // MARK: Parsing

    /// An entry's length (0: the terminator), the address of its CIE id/pointer field, the field,
    /// and whether it uses the 64-bit format. Leaves the cursor after the field.
    static func entryHeader(_ cursor: inout CallFrameCursor) throws(ELFError) -> (length: UInt64, idAddress: UInt64, id: UInt64, is64: Bool) {
        var length = UInt64(try cursor.u32())
        var is64 = false
        if length == 0xffff_ffff {
            length = try cursor.u64()
            is64 = true
        }
        if length == 0 { return (0, cursor.address, 0, is64) }
        let idAddress = cursor.address
        let id = is64 ? try cursor.u64() : UInt64(try cursor.u32())
        return (length, idAddress, id, is64)
    }

    /// The offset just past the entry whose length field said `length`, checked to lie in the segment.
    static func checkedEnd(_ cursor: CallFrameCursor, idAddress: UInt64, length: UInt64, is64: Bool) throws(ELFError) -> Int {
        let idOffset = cursor.offset - (is64 ? 8 : 4)
        guard length <= UInt64(cursor.end - idOffset) else {
            throw cursor.malformed("an entry of \(length) bytes runs past its segment")
        }
        return idOffset + Int(length)
    }

    /// The FDE at the cursor, with its CIE: the function's range and the cursor and CIE ready
    /// to run its instructions.
    private func parseDescription(_ cursor: inout CallFrameCursor) throws(ELFError) -> (
        start: UInt64, end: UInt64, cie: CommonInformationEntry, cieCursor: CallFrameCursor
    ) {
        let (length, idAddress, id, is64) = try Self.entryHeader(&cursor)
        guard length != 0, id != 0 else { throw cursor.malformed("the table leads to a CIE or a terminator, not an FDE") }
        cursor.end = try Self.checkedEnd(cursor, idAddress: idAddress, length: length, is64: is64)
        var cieCursor = try Self.cursor(file, segments, at: idAddress &- id)
        let cie = try CommonInformationEntry.parse(&cieCursor)
        let start = try cursor.pointer(cie.pointerEncoding, dataBase: header)
        let range = try cursor.pointer(cie.pointerEncoding & 0x0f)
        if cie.hasAugmentationData { try cursor.skip(try cursor.uleb()) }
        return (start, start &+ range, cie, cieCursor)
    }

    private func rule(at address: UInt64, entry: UInt64) throws(ELFError) -> CallFrameRule? {
        var cursor = try Self.cursor(file, segments, at: entry)
        var (start, end, cie, cieCursor) = try parseDescription(&cursor)
        guard start <= address, address < end else { return nil }
        let interpreter = CallFrameInterpreter(
            codeAlignment: cie.codeAlignment, dataAlignment: cie.dataAlignment, pointerEncoding: cie.pointerEncoding)
        var initial = CallFrameInterpreter.Row()
        try interpreter.run(&cieCursor, row: &initial, initial: initial, location: start, target: .max)
        var row = initial
        try interpreter.run(&cursor, row: &row, initial: initial, location: start, target: address)
        if case .register(let register, _) = row.frameAddress, register == UInt16.max {
            throw cursor.malformed("no CFA rule for 0x\(String(address, radix: 16))")
        }
        return CallFrameRule(
            frameAddress: row.frameAddress, registers: row.registers, functionStart: start, functionEnd: end,
            isSignalFrame: cie.isSignalFrame)
    }

    /// A cursor from `address` to the end of the file bytes of its segment.
    static func cursor(_ file: ByteView, _ segments: [Segment], at address: UInt64) throws(ELFError) -> CallFrameCursor {
        for segment in segments where segment.vaddr <= address && address &- segment.vaddr < segment.fileSize {
            guard file.contains(offset: segment.offset, length: segment.fileSize) else {
                throw ELFError.truncated(
                    path: "", detail: "segment at 0x\(String(segment.vaddr, radix: 16)) runs past the end of the file")
            }
            let base = Int(segment.offset)
            let offset = base + Int(address - segment.vaddr)
            return CallFrameCursor(
                view: file, baseAddress: segment.vaddr &- segment.offset, offset: offset, end: base + Int(segment.fileSize))
        }
        throw ELFError.malformed(
            path: "", detail: "call frame information at 0x\(String(address, radix: 16)) is in no loaded segment")
    }
}
