#if canImport(Glibc)
import Glibc
#endif

import LaunchprofSampling

/// Facts read from /proc/PID: the executable after an exec, the mappings after a crash.
public enum ProcessMaps {
    public typealias Mapping = StackSymbolizer.Mapping

    static func executablePath(_ pid: pid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// File-backed mappings of `pid` (`/proc/PID/maps`).
    static func read(_ pid: pid_t) -> [Mapping] {
        ProcessMappings.files(pid)
    }
}
