/// Reads ELF note records (PT_NOTE / SHT_NOTE contents).
enum NoteParser {
    private static let gnuName: [UInt8] = Array("GNU".utf8)
    private static let buildIDType: UInt32 = 3  // NT_GNU_BUILD_ID

    /// The GNU build-id in lowercase hex, as `readelf -n` prints it, or nil when absent.
    ///
    /// - Parameters:
    ///   - notes: the bytes of one note segment or section.
    ///   - alignment: the segment's alignment; GNU property notes use 8, all others 4.
    static func buildID(in notes: ByteView, alignment: UInt64) throws(ELFError) -> String? {
        let align = alignment == 8 ? 8 : 4
        var offset = 0
        while offset + 12 <= notes.count {
            let nameSize = Int(try notes.u32(offset))
            let descSize = Int(try notes.u32(offset + 4))
            let type = try notes.u32(offset + 8)
            let nameStart = offset + 12
            // Padding is relative to the segment start: 8-aligned notes pad the 12-byte header too.
            let descStart = padded(nameStart + nameSize, align)
            let next = padded(descStart + descSize, align)
            guard nameSize <= notes.count, descSize <= notes.count, descStart + descSize <= notes.count else {
                throw ELFError.truncated(path: "", detail: "note record at offset \(offset) overruns its segment")
            }
            if type == buildIDType, nameSize == 4, notes.cStringEquals(nameStart, gnuName) {
                return hex(notes, from: descStart, count: descSize)
            }
            offset = next
        }
        return nil
    }

    private static func padded(_ size: Int, _ align: Int) -> Int {
        (size + align - 1) & ~(align - 1)
    }

    private static func hex(_ view: ByteView, from start: Int, count: Int) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(count * 2)
        for index in start..<(start + count) {
            let byte = view.bytes[index]
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
