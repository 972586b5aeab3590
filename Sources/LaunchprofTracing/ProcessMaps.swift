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
        guard let file = fopen("/proc/\(pid)/maps", "r") else { return [] }
        defer { fclose(file) }
        var mappings: [Mapping] = []
        var line = [CChar](repeating: 0, count: 4608)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line)
            let fields = text.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16),
                let end = UInt64(range[1], radix: 16), let offset = UInt64(fields[2], radix: 16)
            else { continue }
            let path = fields[5].trimmingCharacters(in: " \n")
            guard path.hasPrefix("/") else { continue }
            mappings.append(Mapping(start: start, end: end, offset: offset, path: path))
        }
        return mappings
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = self[...]
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
