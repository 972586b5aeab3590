/// Bounds-checked little-endian reads from a borrowed byte buffer.
///
/// All of launchprof's own parsers of untrusted bytes (loader cache, notes, dynamic sections,
/// relocation and hash tables) read through this type, so a bad offset becomes an `ELFError`
/// and never an out-of-bounds read. The buffer must outlive the view.
struct ByteView {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var count: Int { bytes.count }

    /// Whether `length` bytes starting at `offset` lie inside the buffer (overflow-safe).
    func contains(offset: UInt64, length: UInt64) -> Bool {
        let size = UInt64(bytes.count)
        return offset <= size && length <= size - offset
    }

    func u8(_ offset: Int) throws(ELFError) -> UInt8 {
        guard offset >= 0, offset < bytes.count else { throw outOfBounds(offset, 1) }
        return bytes[offset]
    }

    func u16(_ offset: Int) throws(ELFError) -> UInt16 {
        guard offset >= 0, offset <= bytes.count - 2 else { throw outOfBounds(offset, 2) }
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    func u32(_ offset: Int) throws(ELFError) -> UInt32 {
        guard offset >= 0, offset <= bytes.count - 4 else { throw outOfBounds(offset, 4) }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    func u64(_ offset: Int) throws(ELFError) -> UInt64 {
        guard offset >= 0, offset <= bytes.count - 8 else { throw outOfBounds(offset, 8) }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The NUL-terminated string at `offset` (it must end inside the buffer).
    func cString(_ offset: Int) throws(ELFError) -> String {
        guard offset >= 0, offset < bytes.count else { throw outOfBounds(offset, 1) }
        let tail = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard let end = tail.firstIndex(of: 0) else {
            throw ELFError.truncated(path: "", detail: "string at offset \(offset) is not terminated")
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: tail[..<end]), as: UTF8.self)
    }

    /// Whether the NUL-terminated string at `offset` equals `name`, without allocating.
    func cStringEquals(_ offset: Int, _ name: some Collection<UInt8>) -> Bool {
        guard offset >= 0, offset < bytes.count else { return false }
        var index = offset
        for byte in name {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
        }
        return index < bytes.count && bytes[index] == 0
    }

    /// A sub-view of `length` bytes at `offset`.
    func slice(offset: UInt64, length: UInt64) throws(ELFError) -> ByteView {
        guard contains(offset: offset, length: length) else {
            throw ELFError.truncated(
                path: "", detail: "\(length) bytes at offset \(offset) exceed the \(bytes.count)-byte file")
        }
        let start = Int(offset)
        return ByteView(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))]))
    }

    private func outOfBounds(_ offset: Int, _ length: Int) -> ELFError {
        .truncated(path: "", detail: "\(length) bytes at offset \(offset) exceed the \(bytes.count)-byte buffer")
    }
}
