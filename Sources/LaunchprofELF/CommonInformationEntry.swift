/// A CIE of `.eh_frame`: what its FDEs share (alignment factors, the return address column,
/// how their addresses are encoded) and the initial instructions every row starts from.
struct CommonInformationEntry {
    var codeAlignment: UInt64
    var dataAlignment: Int64
    /// `DW_EH_PE_*` of the FDEs' addresses (augmentation `R`; absolute without it).
    var pointerEncoding: UInt8
    /// Augmentation `z`: FDEs carry a length-prefixed augmentation block.
    var hasAugmentationData: Bool
    /// Augmentation `S`: a signal trampoline.
    var isSignalFrame: Bool

    /// Parses the CIE at the cursor and leaves the cursor over its initial instructions.
    static func parse(_ cursor: inout CallFrameCursor) throws(ELFError) -> CommonInformationEntry {
        let (length, idAddress, id, is64) = try CallFrameTable.entryHeader(&cursor)
        guard length != 0, id == 0 else { throw cursor.malformed("an FDE's CIE pointer leads to no CIE") }
        cursor.end = try CallFrameTable.checkedEnd(cursor, idAddress: idAddress, length: length, is64: is64)
        let version = try cursor.u8()
        guard version == 1 || version == 3 || version == 4 else { throw cursor.malformed("CIE version \(version)") }
        // The augmentation string, read again below (no copy: this runs on every rule computed).
        let augmentationStart = cursor.offset
        while try cursor.u8() != 0 {}
        let augmentationEnd = cursor.offset - 1
        if version == 4 {
            _ = try cursor.u8()  // address size
            _ = try cursor.u8()  // segment selector size
        }
        let first = augmentationEnd > augmentationStart ? try cursor.view.u8(augmentationStart) : 0
        let hasZ = first == UInt8(ascii: "z")
        var entry = CommonInformationEntry(
            codeAlignment: try cursor.uleb(), dataAlignment: try cursor.sleb(), pointerEncoding: 0,
            hasAugmentationData: hasZ, isSignalFrame: false)
        let returnAddress = version == 1 ? UInt64(try cursor.u8()) : try cursor.uleb()
        guard returnAddress == UInt64(CallFrameRule.returnAddressRegister) else {
            throw cursor.malformed("return address in DWARF register \(returnAddress), not x86-64's 16")
        }
        guard entry.hasAugmentationData else {
            guard augmentationEnd == augmentationStart else { throw cursor.malformed("CIE augmentation without z") }
            return entry
        }
        let dataLength = try cursor.uleb()
        guard dataLength <= UInt64(cursor.end - cursor.offset) else {
            throw cursor.malformed("CIE augmentation data of \(dataLength) bytes runs past the entry")
        }
        let instructions = cursor.offset + Int(dataLength)
        for index in (augmentationStart + 1)..<augmentationEnd {
            let letter = try cursor.view.u8(index)
            switch letter {
            case UInt8(ascii: "R"): entry.pointerEncoding = try cursor.u8()
            case UInt8(ascii: "L"): _ = try cursor.u8()
            case UInt8(ascii: "P"): _ = try cursor.pointer(try cursor.u8() & 0x7f)
            case UInt8(ascii: "S"): entry.isSignalFrame = true
            case UInt8(ascii: "B"), UInt8(ascii: "G"): break  // other architectures' markers, no data
            default:
                // The length lets the rest be skipped, but an unknown letter may change the FDEs.
                throw cursor.malformed("unknown CIE augmentation '\(Character(Unicode.Scalar(letter)))'")
            }
        }
        guard cursor.offset <= instructions else { throw cursor.malformed("CIE augmentation data longer than its length") }
        cursor.offset = instructions
        return entry
    }
}
