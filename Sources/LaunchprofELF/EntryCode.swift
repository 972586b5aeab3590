extension ELFImage {
    /// `main`'s address (unrelocated) read from the program's entry code, for stripped programs.
    ///
    /// glibc's x86-64 `_start` begins with `xor %ebp,%ebp` and, a few instructions later, passes
    /// `main` to `__libc_start_main` in %rdi, immediately before calling it:
    ///
    ///     lea  main(%rip),%rdi        48 8d 3d <disp32>   (position-independent programs)
    ///     mov  $main,%rdi             48 c7 c7 <imm32>    (fixed-address programs)
    ///     call *__libc_start_main@GOTPCREL(%rip)   ff 15 …   (or a direct call: e8 / 67 e8)
    ///
    /// Only that exact shape is accepted, and `main` must land inside a loadable segment; any
    /// other entry code (musl, Go, hand-written) gives nil and the tracer finds `main` at run
    /// time from `__libc_start_main`'s argument instead.
    public var mainFromEntryCode: UInt64? {
        let length: UInt64 = 64
        guard let code = try? segments.view(in: backing.view, vaddr: entry, length: length),
            (try? code.u8(0)) == 0x31, (try? code.u8(1)) == 0xed
        else { return nil }
        for offset in 2..<(Int(length) - 9) {
            guard let prefix = try? code.u8(offset), prefix == 0x48,
                let opcode = try? code.u8(offset + 1), let modrm = try? code.u8(offset + 2),
                let operand = try? code.u32(offset + 3)
            else { continue }
            let next = offset + 7
            guard isCall(code, at: next) else { continue }
            let main: UInt64
            switch (opcode, modrm) {
            case (0x8d, 0x3d):  // lea disp32(%rip),%rdi: relative to the next instruction
                main = entry &+ UInt64(next) &+ UInt64(bitPattern: Int64(Int32(bitPattern: operand)))
            case (0xc7, 0xc7):  // mov $imm32,%rdi (sign-extended)
                main = UInt64(bitPattern: Int64(Int32(bitPattern: operand)))
            default:
                continue
            }
            return segments.fileOffset(of: main) == nil ? nil : main
        }
        return nil
    }

    private func isCall(_ code: ByteView, at offset: Int) -> Bool {
        switch ((try? code.u8(offset)), (try? code.u8(offset + 1))) {
        case (0xff, 0x15), (0xe8, _), (0x67, 0xe8): return true
        default: return false
        }
    }
}
