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
        /// A launch boundary (`BoundaryRecorder` records it).
        case boundary(Boundary)
        /// The loader's `_dl_debug_state`: process control only (reads the link map).
        case debugState
    }

    private struct Armed {
        var original: UInt8
        /// The 8 bytes at the address before the int3, when no other breakpoint shares them:
        /// removal then writes them back in one request instead of reading first.
        var originalWord: UInt64?
        var actions: [Action]
    }

    private var armed: [UInt64: Armed] = [:]

    /// A breakpoint to arm. `word`, when known, is the 8 bytes at `address` before the int3:
    /// program text is the same in every launch, so a word learned in one launch spares the
    /// next ones a read of the tracee (the costliest request in a stop: it faults the page in).
    struct Placement {
        var address: UInt64
        var action: Action
        var word: UInt64? = nil
    }

    mutating func arm(_ pid: pid_t, at address: UInt64, _ action: Action, word: UInt64? = nil) throws(TracerError) {
        try arm(pid, [Placement(address: address, action: action, word: word)])
    }

    /// Arms several breakpoints, reading the original bytes not known yet in one system call
    /// (each stop the child spends in the tracer is launch time launchprof adds).
    mutating func arm(_ pid: pid_t, _ placements: [Placement]) throws(TracerError) {
        var fresh: [Placement] = []
        for placement in placements {
            if armed[placement.address] != nil {
                armed[placement.address]!.actions.append(placement.action)
            } else {
                fresh.append(placement)
                armed[placement.address] = Armed(original: 0, originalWord: nil, actions: [placement.action])
            }
        }
        guard !fresh.isEmpty else { return }
        var read = try Ptrace.readWords(pid, at: fresh.filter { $0.word == nil }.map(\.address))[...]
        for placement in fresh {
            let address = placement.address
            let word = placement.word ?? read.popFirst()!
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

    /// The 8 bytes that were at `address` before its armed breakpoint, when the table knows them.
    func originalWord(at address: UInt64) -> UInt64? { armed[address]?.originalWord }

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
