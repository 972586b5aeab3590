extension CallFrameTable {
    /// The call frame information of a loaded object, nil when it has no PT_GNU_EH_FRAME. The
    /// table keeps the object (its mapped bytes) alive.
    public init?(object: ObjectSymbols) throws(ELFError) {
        guard let header = object.ehFrameHeader else { return nil }
        do {
            try self.init(
                bytes: object.bytes,
                segments: object.segments.map { Segment(vaddr: $0.vaddr, offset: $0.offset, fileSize: $0.fileSize) },
                ehFrameHeader: header, owner: object)
        } catch {
            throw error.about(object.path)
        }
    }
}
