/// A bounds-checked reader of call frame information: fixed-size integers, LEB128 numbers and
/// the `DW_EH_PE_*` pointer encodings of `.eh_frame`, between `offset` and `end` of a segment's
/// file bytes, knowing the (unrelocated) address of each byte for pc-relative pointers.
struct CallFrameCursor {
    let view: ByteView
    /// The address of `view`'s first byte.
    let baseAddress: UInt64
    var offset: Int
    var end: Int

    init(view: ByteView, baseAddress: UInt64, offset: Int, end: Int) {
        self.view = view
        self.baseAddress = baseAddress
        self.offset = offset
        self.end = min(end, view.count)
    }

    /// The address of the next byte.
    var address: UInt64 { baseAddress &+ UInt64(offset) }
    var isAtEnd: Bool { offset >= end }

    mutating func u8() throws(ELFError) -> UInt8 {
        guard offset < end else { throw overrun(1) }
        let value = try view.u8(offset)
        offset += 1
        return value
    }

    mutating func u16() throws(ELFError) -> UInt16 {
        guard end - offset >= 2 else { throw overrun(2) }
        let value = try view.u16(offset)
        offset += 2
        return value
    }

    mutating func u32() throws(ELFError) -> UInt32 {
        guard end - offset >= 4 else { throw overrun(4) }
        let value = try view.u32(offset)
        offset += 4
        return value
    }

    mutating func u64() throws(ELFError) -> UInt64 {
        guard end - offset >= 8 else { throw overrun(8) }
        let value = try view.u64(offset)
        offset += 8
        return value
    }

    mutating func skip(_ count: UInt64) throws(ELFError) {
        guard offset <= end, count <= UInt64(end - offset) else { throw overrun(Int(clamping: count)) }
        offset += Int(count)
    }

    /// An unsigned LEB128 number; bits past the 64th are dropped.
    mutating func uleb() throws(ELFError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            if shift < 64 { value |= UInt64(byte & 0x7f) << shift }
            shift += 7
            if byte & 0x80 == 0 { return value }
        }
    }

    /// A signed LEB128 number.
    mutating func sleb() throws(ELFError) -> Int64 {
        var value: Int64 = 0
        var shift: Int64 = 0
        var byte: UInt8
        repeat {
            byte = try u8()
            if shift < 64 { value |= Int64(byte & 0x7f) << shift }
            shift += 7
        } while byte & 0x80 != 0
        // Sign-extend (as bits: at shift 63 the negation of 1 << shift would overflow).
        if shift < 64 && byte & 0x40 != 0 { value |= Int64(bitPattern: UInt64.max << UInt64(shift)) }
        return value
    }

    /// `DW_EH_PE_omit`: the value is absent.
    static let omitted: UInt8 = 0xff

    /// A pointer in `encoding`: its format (absolute, LEB128, 2/4/8 bytes, signed or not) and
    /// what it is relative to (nothing, its own address, or `dataBase` — `.eh_frame_hdr`'s
    /// start). Indirect pointers are returned as the address of the pointer (the callers only
    /// skip them); text- and function-relative ones are not used on x86-64 Linux and are refused.
    mutating func pointer(_ encoding: UInt8, dataBase: UInt64 = 0) throws(ELFError) -> UInt64 {
        let fieldAddress = address
        let value: UInt64
        switch encoding & 0x0f {
        case 0x00, 0x04: value = try u64()
        case 0x01: value = try uleb()
        case 0x02: value = UInt64(try u16())
        case 0x03: value = UInt64(try u32())
        case 0x09: value = UInt64(bitPattern: try sleb())
        case 0x0a: value = UInt64(bitPattern: Int64(Int16(bitPattern: try u16())))
        case 0x0b: value = UInt64(bitPattern: Int64(Int32(bitPattern: try u32())))
        case 0x0c: value = try u64()
        default: throw malformed("pointer encoding 0x\(String(encoding, radix: 16)) has no known format")
        }
        switch encoding & 0x70 {
        case 0x00: return value
        case 0x10: return fieldAddress &+ value
        case 0x30: return dataBase &+ value
        default: throw malformed("pointer encoding 0x\(String(encoding, radix: 16)) is relative to text or a function")
        }
    }

    func malformed(_ detail: String) -> ELFError {
        .malformed(path: "", detail: "call frame information at 0x\(String(address, radix: 16)): \(detail)")
    }

    private func overrun(_ length: Int) -> ELFError {
        .truncated(
            path: "", detail: "call frame information at 0x\(String(address, radix: 16)): \(length) bytes past its entry's end")
    }
}
