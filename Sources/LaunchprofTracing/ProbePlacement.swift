/// Where in a function's first instructions a uprobe goes.
///
/// Two rules. Cost: the kernel handles a hit on a `push`, `nop`, `call rel32`, `jmp` or
/// conditional jump by emulating the instruction; on anything else it single-steps a copy of it
/// out of line, one more trap, which on a virtual machine dominates (measured here: ~1.2 µs per
/// emulated hit, 11–22 µs per stepped one). Coexistence: a uprobe's int3 swallows any other
/// breakpoint on the same instruction, in every process that maps the file — a debugger's, or
/// launchprof's own ptrace observer's, which sits on the first instruction and writes back the
/// 8 bytes it covers. So the probe goes on the first emulated instruction at least 8 bytes into
/// the function's straight-line prologue (only register and stack set-up before it, so every
/// call still passes it exactly once, a few ns after the entry); a function that starts with a
/// `jmp` is followed to its target (gcc's `frame_dummy` jumps to `register_tm_clones`).
public enum ProbePlacement {
    /// Bytes kept clear of the entry: a ptrace breakpoint's word.
    public static let clearance = 8

    /// The offset from the entry to probe, and whether the kernel emulates the instruction there.
    public static func place(_ code: [UInt8]) -> (delta: UInt64, emulated: Bool) {
        var at = 0
        var firstEmulated: Int?
        var secondInstruction: Int?
        while at < min(code.count, 64) {
            if isEmulated(code, at) {
                if at >= clearance { return (UInt64(at), true) }
                if firstEmulated == nil, at > 0 { firstEmulated = at }
            }
            guard let length = skippableLength(code, at) else { break }
            at += length
            if secondInstruction == nil { secondInstruction = at }
        }
        // Off the entry even at a single-step's price: the entry is where breakpoints go.
        if let firstEmulated { return (UInt64(firstEmulated), true) }
        if let secondInstruction, secondInstruction < code.count { return (UInt64(secondInstruction), false) }
        return (0, isEmulated(code, 0))
    }

    /// Where an unconditional `jmp` at the start of `code` (at `address`) lands, if it starts
    /// with one.
    public static func jumpTarget(_ code: [UInt8], at address: UInt64) -> UInt64? {
        guard let op = code.first else { return nil }
        if op == 0xeb, code.count >= 2 {
            return address &+ 2 &+ UInt64(bitPattern: Int64(Int8(bitPattern: code[1])))
        }
        if op == 0xe9, code.count >= 5 {
            let rel = UInt32(code[1]) | UInt32(code[2]) << 8 | UInt32(code[3]) << 16 | UInt32(code[4]) << 24
            return address &+ 5 &+ UInt64(bitPattern: Int64(Int32(bitPattern: rel)))
        }
        return nil
    }

    /// The offset of the conditional jump of a function that starts with a guard — a compare
    /// of memory with a register (`cmp %reg, disp8(%reg)`), a short conditional jump, a `ret` —
    /// where the argument registers are still as the caller set them and the kernel emulates the
    /// instruction; nil for any other start.
    public static func guardJump(_ code: [UInt8]) -> UInt64? {
        // REX.W 39/3B with a [reg + disp8] operand: 4 bytes.
        guard code.count >= 7, code[0] == 0x48, code[1] == 0x39 || code[1] == 0x3b, code[2] >> 6 == 1,
            code[2] & 7 != 4, (0x70...0x7f).contains(code[4]), code[6] == 0xc3
        else { return nil }
        return 4
    }

    /// push r64, nop, nopl, call rel32, jmp rel8/rel32, jcc rel8/rel32 (what the x86 uprobe code
    /// emulates instead of stepping).
    static func isEmulated(_ code: [UInt8], _ at: Int) -> Bool {
        guard at < code.count else { return false }
        let op = code[at]
        switch op {
        case 0x50...0x57, 0x90, 0xe8, 0xe9, 0xeb, 0x70...0x7f: return true
        case 0x41: return at + 1 < code.count && (0x50...0x57).contains(code[at + 1])
        case 0x0f: return at + 1 < code.count && (code[at + 1] == 0x1f || (0x80...0x8f).contains(code[at + 1]))
        default: return false
        }
    }

    /// The length of an instruction that only sets up registers or the stack and falls through
    /// (pushes, nops and moves compilers put in prologues); nil for anything else, branches
    /// included (the scan stops there).
    static func skippableLength(_ code: [UInt8], _ at: Int) -> Int? {
        func byte(_ index: Int) -> UInt8? { at + index < code.count ? code[at + index] : nil }
        func registerForm(_ index: Int) -> Bool { (byte(index) ?? 0) >> 6 == 3 }
        func ripRelative(_ index: Int) -> Bool { (byte(index) ?? 0) & 0xc7 == 0x05 }
        guard let op = byte(0) else { return nil }
        if op == 0xf3, byte(1) == 0x0f, byte(2) == 0x1e, byte(3) == 0xfa { return 4 }  // endbr64
        if (0x50...0x5f).contains(op) || op == 0x90 { return 1 }  // push/pop r64, nop
        if op == 0x41, let next = byte(1), (0x50...0x5f).contains(next) { return 2 }
        let rex = (0x40...0x4f).contains(op)
        let base = rex ? 1 : 0
        guard let opcode = byte(base) else { return nil }
        if (0xb8...0xbf).contains(opcode) { return base + (op == 0x48 || op == 0x49 ? 9 : 5) }  // mov r, imm
        switch opcode {
        case 0x89, 0x31, 0x85, 0x29, 0x01, 0x33, 0x8b, 0x21, 0x09, 0x39:
            // mov/xor/test/sub/add/and/or/cmp between registers, or a rip-relative load.
            if registerForm(base + 1) { return base + 2 }
            if opcode == 0x8b, ripRelative(base + 1) { return base + 6 }
            return nil
        case 0x83 where registerForm(base + 1), 0xc1 where registerForm(base + 1): return base + 3  // r, imm8
        case 0x81 where registerForm(base + 1): return base + 6  // r, imm32
        case 0xd1 where registerForm(base + 1): return base + 2  // shift r by 1
        case 0x8d where ripRelative(base + 1): return base + 6  // lea r, [rip + disp32]
        case 0x80 where ripRelative(base + 1), 0x83 where ripRelative(base + 1): return base + 7  // cmp [rip], imm8
        default: return nil
        }
    }
}
