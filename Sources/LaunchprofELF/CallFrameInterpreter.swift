/// Runs DWARF call frame instructions (`DW_CFA_*`, as `.eh_frame` holds them) up to an address,
/// giving the row of the call frame table there. Registers past x86-64's 16 and the return
/// address (vector registers) are parsed and ignored.
struct CallFrameInterpreter {
    /// The CIE's factors and pointer encoding.
    let codeAlignment: UInt64
    let dataAlignment: Int64
    let pointerEncoding: UInt8
    /// Nesting allowed for DW_CFA_remember_state (compilers use one or two levels).
    static let rememberedStates = 64

    struct Row {
        var frameAddress = CallFrameRule.FrameAddress.register(UInt16.max, offset: 0)
        var registers = InlineArray<17, CallFrameRule.Register>(repeating: .unchanged)
    }

    /// Runs the instructions in `cursor` from `location` until the location passes `target`,
    /// changing `row`; `initial` is the CIE's row (for DW_CFA_restore).
    func run(
        _ cursor: inout CallFrameCursor, row: inout Row, initial: Row, location start: UInt64, target: UInt64
    ) throws(ELFError) {
        var location = start
        var remembered: [Row] = []
        func set(_ register: UInt64, _ rule: CallFrameRule.Register) {
            if register < UInt64(CallFrameRule.registerCount) { row.registers[Int(register)] = rule }
        }
        func restore(_ register: UInt64) {
            if register < UInt64(CallFrameRule.registerCount) {
                row.registers[Int(register)] = initial.registers[Int(register)]
            }
        }
        func factored(_ value: UInt64) -> Int64 { Int64(bitPattern: value) &* dataAlignment }
        func advance(_ delta: UInt64) -> Bool {
            location = location &+ delta &* codeAlignment
            return location > target
        }
        while !cursor.isAtEnd {
            let op = try cursor.u8()
            let operand = UInt64(op & 0x3f)
            switch op & 0xc0 {
            case 0x40:  // DW_CFA_advance_loc
                if advance(operand) { return }
                continue
            case 0x80:  // DW_CFA_offset
                set(operand, .savedAt(offset: factored(try cursor.uleb())))
                continue
            case 0xc0:  // DW_CFA_restore
                restore(operand)
                continue
            default:
                break
            }
            switch op {
            case 0x00, 0x2e:  // DW_CFA_nop; DW_CFA_GNU_args_size (for exception handling only)
                if op == 0x2e { _ = try cursor.uleb() }
            case 0x01:  // DW_CFA_set_loc
                location = try cursor.pointer(pointerEncoding)
                if location > target { return }
            case 0x02:
                if advance(UInt64(try cursor.u8())) { return }
            case 0x03:
                if advance(UInt64(try cursor.u16())) { return }
            case 0x04:
                if advance(UInt64(try cursor.u32())) { return }
            case 0x05:  // DW_CFA_offset_extended
                let register = try cursor.uleb()
                set(register, .savedAt(offset: factored(try cursor.uleb())))
            case 0x06:  // DW_CFA_restore_extended
                restore(try cursor.uleb())
            case 0x07:  // DW_CFA_undefined
                set(try cursor.uleb(), .undefined)
            case 0x08:  // DW_CFA_same_value
                set(try cursor.uleb(), .unchanged)
            case 0x09:  // DW_CFA_register
                let register = try cursor.uleb()
                set(register, .inRegister(UInt16(truncatingIfNeeded: try cursor.uleb())))
            case 0x0a:  // DW_CFA_remember_state
                guard remembered.count < Self.rememberedStates else {
                    throw cursor.malformed("more than \(Self.rememberedStates) nested DW_CFA_remember_state")
                }
                remembered.append(row)
            case 0x0b:  // DW_CFA_restore_state
                guard let last = remembered.popLast() else {
                    throw cursor.malformed("DW_CFA_restore_state without a remembered state")
                }
                row = last
            case 0x0c:  // DW_CFA_def_cfa
                let register = try cursor.uleb()
                let offset = try cursor.uleb()
                row.frameAddress = .register(UInt16(truncatingIfNeeded: register), offset: Int64(bitPattern: offset))
            case 0x0d:  // DW_CFA_def_cfa_register: keeps the offset
                let register = UInt16(truncatingIfNeeded: try cursor.uleb())
                row.frameAddress = .register(register, offset: currentOffset(row))
            case 0x0e:  // DW_CFA_def_cfa_offset
                let offset = Int64(bitPattern: try cursor.uleb())
                if case .register(let register, _) = row.frameAddress { row.frameAddress = .register(register, offset: offset) }
            case 0x0f:  // DW_CFA_def_cfa_expression
                try cursor.skip(try cursor.uleb())
                row.frameAddress = .expression
            case 0x10:  // DW_CFA_expression
                let register = try cursor.uleb()
                try cursor.skip(try cursor.uleb())
                set(register, .expression)
            case 0x11:  // DW_CFA_offset_extended_sf
                let register = try cursor.uleb()
                set(register, .savedAt(offset: try cursor.sleb() &* dataAlignment))
            case 0x12:  // DW_CFA_def_cfa_sf
                let register = try cursor.uleb()
                row.frameAddress = .register(UInt16(truncatingIfNeeded: register), offset: try cursor.sleb() &* dataAlignment)
            case 0x13:  // DW_CFA_def_cfa_offset_sf
                let offset = try cursor.sleb() &* dataAlignment
                if case .register(let register, _) = row.frameAddress { row.frameAddress = .register(register, offset: offset) }
            case 0x14:  // DW_CFA_val_offset
                let register = try cursor.uleb()
                set(register, .valueAt(offset: factored(try cursor.uleb())))
            case 0x15:  // DW_CFA_val_offset_sf
                let register = try cursor.uleb()
                set(register, .valueAt(offset: try cursor.sleb() &* dataAlignment))
            case 0x16:  // DW_CFA_val_expression
                let register = try cursor.uleb()
                try cursor.skip(try cursor.uleb())
                set(register, .valueExpression)
            case 0x2f:  // DW_CFA_GNU_negative_offset_extended
                let register = try cursor.uleb()
                set(register, .savedAt(offset: 0 &- factored(try cursor.uleb())))
            default:
                throw cursor.malformed("unknown call frame instruction 0x\(String(op, radix: 16))")
            }
        }
    }

    private func currentOffset(_ row: Row) -> Int64 {
        if case .register(_, let offset) = row.frameAddress { return offset }
        return 0
    }
}
