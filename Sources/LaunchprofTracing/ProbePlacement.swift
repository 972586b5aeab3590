/// Where in a function's first instructions a uprobe costs least.
///
/// The kernel handles a uprobe hit on a `push`, `nop`, `call rel32`, `jmp` or conditional jump by
/// emulating the instruction; on anything else it single-steps a copy of it out of line, one
/// more trap. On a virtual machine that trap dominates (measured here: ~1.2 µs per emulated hit,
/// 11–22 µs per stepped one). So a probe goes on the first emulated instruction of the
/// function's straight-line prologue, when only plain register and stack set-up precede it:
/// every call still passes it exactly once, a few instructions (ns) after the entry.
public enum ProbePlacement {
    /// The offset from the entry to probe, and whether the kernel emulates the instruction there.
    public static func place(_ code: [UInt8]) -> (delta: UInt64, emulated: Bool) {
        var at = 0
        while at < min(code.count, 48) {
            if isEmulated(code, at) { return (UInt64(at), true) }
            guard let length = skippableLength(code, at) else { break }
            at += length
        }
        return (0, isEmulated(code, 0))
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

    /// The length of an instruction that only sets up registers or the stack and never branches,
    /// among those compilers put in prologues; nil for anything else (the scan stops there).
    static func skippableLength(_ code: [UInt8], _ at: Int) -> Int? {
        func byte(_ index: Int) -> UInt8? { at + index < code.count ? code[at + index] : nil }
        func registerForm(_ index: Int) -> Bool { (byte(index) ?? 0) >> 6 == 3 }
        func ripRelative(_ index: Int) -> Bool { (byte(index) ?? 0) & 0xc7 == 0x05 }
        guard let op = byte(0) else { return nil }
        if op == 0xf3, byte(1) == 0x0f, byte(2) == 0x1e, byte(3) == 0xfa { return 4 }  // endbr64
        if (0x58...0x5f).contains(op) { return 1 }  // pop r64
        let rex = (0x40...0x4f).contains(op)
        let opcode = rex ? byte(1) : op
        let base = rex ? 1 : 0
        guard let opcode else { return nil }
        switch opcode {
        case 0x89, 0x31, 0x85, 0x29, 0x01, 0x33, 0x8b:
            // mov/xor/test/sub/add between registers, or a rip-relative load (mov 8b /r).
            if registerForm(base + 1) { return base + 2 }
            if opcode == 0x8b, ripRelative(base + 1) { return base + 6 }
            return nil
        case 0x83 where registerForm(base + 1): return base + 3  // add/sub/and r, imm8
        case 0x81 where registerForm(base + 1): return base + 6  // add/sub/and r, imm32
        case 0x8d where ripRelative(base + 1): return base + 6  // lea r, [rip + disp32]
        default: return nil
        }
    }
}
