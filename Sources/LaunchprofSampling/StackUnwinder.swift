import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// Stacks of stopped tracees through libunwind-ptrace: the instruction pointers of a thread,
/// innermost first. The thread must be in a ptrace stop, and the call must come from the thread
/// that traces it.
public enum StackUnwinder {
    public static func unwind(_ tid: pid_t, maximumFrames: Int = 64) -> [UInt64] {
        var addresses = [UInt64](repeating: 0, count: maximumFrames)
        var count: Int32 = 0
        _ = lp_unwind(tid, &addresses, Int32(maximumFrames), &count)
        return Array(addresses.prefix(Int(count)))
    }
}
