#if canImport(Glibc)
import Glibc
#endif

/// The int3 breakpoints armed in one tracee, each tagged with what its hit means.
///
/// Breakpoints are one-shot: a hit removes the breakpoint and rewinds the program counter, so the
/// tracee never needs a single-step to step over it. A boundary that is hit twice (the loader's
/// `_dl_debug_state`) is re-armed from the next stop instead ("leapfrogging").
struct BreakpointTable {
    enum Action: Equatable, Sendable {
        case relocationStart
        case debugState
        case objectInit(path: String)
        case entry
        case programInit
        case libcStartMain
        case main
    }

    private struct Armed {
        var original: UInt8
        /// The 8 bytes at the address before the int3, when no other breakpoint shares them:
        /// removal then writes them back in one request instead of reading first.
        var originalWord: UInt64?
        var actions: [Action]
    }

    private var armed: [UInt64: Armed] = [:]

    mutating func arm(_ pid: pid_t, at address: UInt64, _ action: Action) throws(TracerError) {
        try arm(pid, [(address, action)])
    }

    /// Arms several breakpoints, reading all their original bytes in one system call (each
    /// stop the child spends in the tracer is launch time launchprof adds).
    mutating func arm(_ pid: pid_t, _ targets: [(address: UInt64, action: Action)]) throws(TracerError) {
        var fresh: [UInt64] = []
        for (address, action) in targets {
            if armed[address] != nil {
                armed[address]!.actions.append(action)
            } else {
                fresh.append(address)
                armed[address] = Armed(original: 0, originalWord: nil, actions: [action])
            }
        }
        guard !fresh.isEmpty else { return }
        let words = try Ptrace.readWords(pid, at: fresh)
        for (address, word) in zip(fresh, words) {
            if sharesWord(address) {
                // Another breakpoint within these 8 bytes: patch the byte alone, re-reading.
                armed[address]!.original = try Ptrace.insertBreakpoint(pid, at: address)
            } else {
                try Ptrace.pokeWord(pid, at: address, (word & ~0xff) | 0xcc)
                armed[address]!.original = UInt8(truncatingIfNeeded: word)
                armed[address]!.originalWord = word
            }
        }
    }

    /// Handles a SIGTRAP at `pc` (one past an int3): if it is ours, removes the breakpoint,
    /// rewinds the tracee and returns the actions. Returns nil for a trap that is not ours.
    mutating func hit(_ pid: pid_t, pc: UInt64) throws(TracerError) -> [Action]? {
        let address = pc &- 1
        guard let entry = armed.removeValue(forKey: address) else { return nil }
        if let word = entry.originalWord, !sharesWord(address) {
            try Ptrace.pokeWord(pid, at: address, word)
        } else {
            try Ptrace.removeBreakpoint(pid, at: address, original: entry.original)
        }
        try Ptrace.setPC(pid, address)
        return entry.actions
    }

    /// Whether another armed breakpoint lies within the 8 bytes a word write at `address`
    /// would cover (or whose word would cover `address`).
    private func sharesWord(_ address: UInt64) -> Bool {
        armed.keys.contains { $0 != address && ($0 > address ? $0 - address : address - $0) < 8 }
    }

    /// Removes every breakpoint still armed (they must not outlive the launch phases).
    mutating func disarmAll(_ pid: pid_t) {
        for (address, entry) in armed {
            try? Ptrace.removeBreakpoint(pid, at: address, original: entry.original)
        }
        armed.removeAll()
    }

    func contains(_ address: UInt64) -> Bool { armed[address] != nil }

    /// A forked copy of the tracee inherited the int3 at `address` but not the table: put the
    /// original byte back in the copy and rewind it, leaving the breakpoint armed in the tracee.
    func restoreCopy(_ pid: pid_t, at address: UInt64) throws(TracerError) {
        guard let entry = armed[address] else { return }
        try Ptrace.removeBreakpoint(pid, at: address, original: entry.original)
        try Ptrace.setPC(pid, address)
    }

    /// Forgets everything without touching memory (after an exec replaced the image).
    mutating func forget() { armed.removeAll() }
}
