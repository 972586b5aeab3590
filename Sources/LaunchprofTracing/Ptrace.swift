import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// The one Swift file facing launchprof's C shim for tracing: every ptrace request, wait and
/// memory access goes through here and errno becomes a `TracerError` on the next line.
/// Every call must come from the thread that spawned the tracee (ptrace has thread affinity).
enum Ptrace {
    static func cont(_ pid: pid_t, signal: Int32 = 0) throws(TracerError) {
        try request(LP_PTRACE_CONT, "CONT", pid, 0, UInt(signal))
    }

    /// Resumes a child pinned to this thread's CPU on that CPU, then gives it its own mask back
    /// (`lp_cont_then_unpin`).
    static func contThenUnpin(_ pid: pid_t, signal: Int32 = 0) throws(TracerError) {
        let error = lp_cont_then_unpin(pid, signal)
        guard error == 0 else { throw .ptrace(request: "CONT", pid: pid, errno: error) }
    }

    /// Resumes to the next system call entry or exit (or signal, or breakpoint).
    static func syscall(_ pid: pid_t, signal: Int32 = 0) throws(TracerError) {
        try request(LP_PTRACE_SYSCALL, "SYSCALL", pid, 0, UInt(signal))
    }

    static func singleStep(_ pid: pid_t) throws(TracerError) {
        try request(LP_PTRACE_SINGLESTEP, "SINGLESTEP", pid, 0, 0)
    }

    static func setOptions(_ pid: pid_t, _ options: Int32) throws(TracerError) {
        try request(LP_PTRACE_SETOPTIONS, "SETOPTIONS", pid, 0, UInt(options))
    }

    /// PTRACE_GETEVENTMSG: the new pid after a fork event, the old tid after an exec.
    static func eventMessage(_ pid: pid_t) throws(TracerError) -> UInt {
        var message: UInt = 0
        try withUnsafeMutablePointer(to: &message) { (pointer) throws(TracerError) in
            try request(LP_PTRACE_GETEVENTMSG, "GETEVENTMSG", pid, 0, UInt(bitPattern: pointer))
        }
        return message
    }

    /// Whether a stop with a signal is a group-stop (PTRACE_GETSIGINFO fails with EINVAL).
    static func isGroupStop(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        return withUnsafeMutablePointer(to: &info) { pointer in
            lp_ptrace(Int32(LP_PTRACE_GETSIGINFO), pid, 0, UInt(bitPattern: pointer), nil)
                == EINVAL
        }
    }

    static func registers(_ pid: pid_t) throws(TracerError) -> lp_registers {
        var registers = lp_registers()
        let error = lp_get_registers(pid, &registers)
        guard error == 0 else { throw .ptrace(request: "GETREGS", pid: pid, errno: error) }
        return registers
    }

    static func setPC(_ pid: pid_t, _ pc: UInt64) throws(TracerError) {
        let error = lp_set_pc(pid, pc)
        guard error == 0 else { throw .ptrace(request: "POKEUSER rip", pid: pid, errno: error) }
    }

    static func insertBreakpoint(_ pid: pid_t, at address: UInt64) throws(TracerError) -> UInt8 {
        var original: UInt8 = 0
        let error = lp_insert_breakpoint(pid, address, &original)
        guard error == 0 else { throw .ptrace(request: "POKETEXT", pid: pid, errno: error) }
        return original
    }

    static func pokeWord(_ pid: pid_t, at address: UInt64, _ word: UInt64) throws(TracerError) {
        let error = lp_poke_word(pid, address, word)
        guard error == 0 else { throw .ptrace(request: "POKETEXT", pid: pid, errno: error) }
    }

    static func removeBreakpoint(_ pid: pid_t, at address: UInt64, original: UInt8) throws(TracerError) {
        let error = lp_remove_breakpoint(pid, address, original)
        guard error == 0 else { throw .ptrace(request: "POKETEXT", pid: pid, errno: error) }
    }

    static func read(_ pid: pid_t, at address: UInt64, count: Int) throws(TracerError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let error = bytes.withUnsafeMutableBytes { lp_read_memory(pid, address, $0.baseAddress!, count) }
        guard error == 0 else { throw .ptrace(request: "process_vm_readv", pid: pid, errno: error) }
        return bytes
    }

    static func readWord(_ pid: pid_t, at address: UInt64) throws(TracerError) -> UInt64 {
        var word: UInt64 = 0
        let error = lp_read_memory(pid, address, &word, 8)
        guard error == 0 else { throw .ptrace(request: "process_vm_readv", pid: pid, errno: error) }
        return word
    }

    /// Reads 8-byte words at many addresses in as few system calls as possible.
    static func readWords(_ pid: pid_t, at addresses: [UInt64]) throws(TracerError) -> [UInt64] {
        guard !addresses.isEmpty else { return [] }
        var words = [UInt64](repeating: 0, count: addresses.count)
        let error = lp_read_words(pid, addresses, &words, Int32(addresses.count))
        guard error == 0 else { throw .ptrace(request: "process_vm_readv", pid: pid, errno: error) }
        return words
    }

    /// Reads `words` 8-byte words at each address, all in one system call: the blocks laid end
    /// to end (block i is `result[i * words ..< (i + 1) * words]`).
    static func readBlocks(_ pid: pid_t, at addresses: [UInt64], words: Int) throws(TracerError) -> [UInt64] {
        guard !addresses.isEmpty else { return [] }
        var blocks = [UInt64](repeating: 0, count: addresses.count * words)
        let error = blocks.withUnsafeMutableBytes {
            lp_read_blocks(pid, addresses, words * 8, $0.baseAddress!, Int32(addresses.count))
        }
        guard error == 0 else { throw .ptrace(request: "process_vm_readv", pid: pid, errno: error) }
        return blocks
    }

    static func wait(_ pid: pid_t = -1, nohang: Bool = false) throws(TracerError) -> lp_wait_result? {
        var result = lp_wait_result()
        let error = lp_wait(pid, nohang, &result)
        guard error == 0 else { throw .ptrace(request: "waitpid", pid: pid, errno: error) }
        return result.pid == 0 ? nil : result
    }

    private static func request(
        _ request: Int, _ name: String, _ pid: pid_t, _ address: UInt, _ data: UInt
    ) throws(TracerError) {
        let error = lp_ptrace(Int32(request), pid, address, data, nil)
        guard error == 0 else { throw .ptrace(request: name, pid: pid, errno: error) }
    }
}
