/// The file's loadable segments: translates the virtual addresses dynamic entries hold into
/// file offsets, as the loader's mapping would place them.
struct SegmentMap: Sendable {
    struct Segment: Sendable {
        var vaddr: UInt64
        var fileOffset: UInt64
        var fileSize: UInt64
        var memorySize: UInt64
    }

    var segments: [Segment]

    /// The file offset backing `vaddr`, or nil when no segment maps it from the file.
    func fileOffset(of vaddr: UInt64) -> UInt64? {
        for segment in segments where vaddr >= segment.vaddr {
            let delta = vaddr - segment.vaddr
            if delta < segment.fileSize {
                return segment.fileOffset &+ delta
            }
        }
        return nil
    }

    /// A view of `length` bytes of the file mapped at `vaddr`.
    func view(in file: ByteView, vaddr: UInt64, length: UInt64) throws(ELFError) -> ByteView {
        guard let offset = fileOffset(of: vaddr) else {
            throw ELFError.malformed(path: "", detail: "address 0x\(String(vaddr, radix: 16)) is not in any segment")
        }
        return try file.slice(offset: offset, length: length)
    }

    /// A view from `vaddr` to the end of the segment that holds it (for tables of unknown size).
    func viewToSegmentEnd(in file: ByteView, vaddr: UInt64) throws(ELFError) -> ByteView {
        for segment in segments where vaddr >= segment.vaddr && vaddr - segment.vaddr < segment.fileSize {
            let delta = vaddr - segment.vaddr
            let offset = segment.fileOffset &+ delta
            let available = min(segment.fileSize - delta, UInt64(file.count) &- min(offset, UInt64(file.count)))
            return try file.slice(offset: offset, length: available)
        }
        throw ELFError.malformed(path: "", detail: "address 0x\(String(vaddr, radix: 16)) is not in any segment")
    }
}
