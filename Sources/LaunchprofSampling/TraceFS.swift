import CLaunchprof

#if canImport(Glibc)
import Glibc
#endif

/// The tracepoint id of raw_syscalls:sys_enter, from tracefs. Mounted at its usual place when it
/// is not (as perf does); nil when that fails: blocked time is then reported without the call.
enum TraceFS {
    private static let roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]

    /// Looked up once per process.
    static let sysEnterID: UInt64? = {
        var found = readID()
        if found == nil {
            _ = mount("nodev", roots[0], "tracefs", 0, nil)
            found = readID()
        }
        // Keeps the tracepoint's probe registered for the life of launchprof (see
        // lp_perf_open_anchor); the descriptor is never closed.
        var anchor: Int32 = -1
        if let found { _ = lp_perf_open_anchor(found, &anchor) }
        return found
    }()

    private static func readID() -> UInt64? {
        for root in roots {
            guard let file = fopen(root + "/events/raw_syscalls/sys_enter/id", "r") else { continue }
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 32)
            guard fgets(&line, 32, file) != nil else { continue }
            let text = String(cString: line).filter(\.isNumber)
            if let id = UInt64(text) { return id }
        }
        return nil
    }
}
