#if canImport(Glibc)
import Glibc
#endif

/// The int3 breakpoints armed in one tracee, each tagged with what its hit means.
///
/// Breakpoints are one-shot: a hit removes the breakpoint and rewinds the program counter, so the
/// tracee never needs a single-step to step over it. A boundary that is hit twice (the loader's
/// `_dl_debug_state`) is re-armed from the next stop instead ("leapfrogging").
struct BreakpointTable {
    enum Action: Equatable {
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
        var actions: [Action]
    }

    private var armed: [UInt64: Armed] = [:]

    var isEmpty: Bool { armed.isEmpty }

    mutating func arm(_ pid: pid_t, at address: UInt64, _ action: Action) throws(TracerError) {
        if var existing = armed[address] {
            existing.actions.append(action)
            armed[address] = existing
            return
        }
        let original = try Ptrace.insertBreakpoint(pid, at: address)
        armed[address] = Armed(original: original, actions: [action])
    }

    /// Handles a SIGTRAP at `pc` (one past an int3): if it is ours, removes the breakpoint,
    /// rewinds the tracee and returns the actions. Returns nil for a trap that is not ours.
    mutating func hit(_ pid: pid_t, pc: UInt64) throws(TracerError) -> [Action]? {
        let address = pc &- 1
        guard let entry = armed.removeValue(forKey: address) else { return nil }
        try Ptrace.removeBreakpoint(pid, at: address, original: entry.original)
        try Ptrace.setPC(pid, address)
        return entry.actions
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
