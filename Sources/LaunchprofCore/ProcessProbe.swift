import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// Facts about a live process read from /proc: how much CPU it has used, how much memory it holds.
enum ProcessProbe {
    /// CPU time of every thread of `pid` in ns (the first field of each task's `schedstat`,
    /// exact, unlike the clock ticks of `stat`). Nil when the process is gone.
    static func cpuNs(_ pid: Int32) -> UInt64? {
        guard let names = DirectoryListing.names("/proc/\(pid)/task") else { return nil }
        var total: UInt64 = 0
        for name in names {
            guard let tid = Int32(name) else { continue }
            guard let text = SmallFile.read("/proc/\(pid)/task/\(tid)/schedstat"),
                let first = text.split(separator: " ").first, let ns = UInt64(first)
            else { continue }
            total += ns
        }
        return total
    }

    /// Proportional set size of `pid` (`Pss:` in `/proc/PID/smaps_rollup`), in bytes.
    static func pssBytes(_ pid: Int32) -> UInt64? {
        guard let text = SmallFile.read("/proc/\(pid)/smaps_rollup") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Pss:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kib = UInt64(fields[1]) else { return nil }
            return kib * 1024
        }
        return nil
    }

    /// Whether `pid` has a handler installed for `signal` (`SigCgt:` in `/proc/PID/status`, a
    /// hex mask whose bit n-1 is signal n). Nil when the process is gone or the line unreadable.
    static func catches(_ pid: Int32, signal: Int32) -> Bool? {
        guard signal >= 1, signal <= 64, let text = SmallFile.read("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("SigCgt:") {
            let hex = line.dropFirst("SigCgt:".count).trimmingPrefix { $0 == " " || $0 == "\t" }
            guard let mask = UInt64(hex, radix: 16) else { return nil }
            return mask & (UInt64(1) << UInt64(signal - 1)) != 0
        }
        return nil
    }
}
