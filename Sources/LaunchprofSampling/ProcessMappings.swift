#if canImport(Glibc)
import Glibc
#endif

/// The executable file mappings of a process, from `/proc/PID/maps`.
enum ProcessMappings {
    /// The address range of the mapping named `name` (`[vdso]`) in `pid`.
    static func range(of name: String, in pid: Int32) -> Range<UInt64>? {
        guard let file = fopen("/proc/\(pid)/maps", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 4608)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line)
            guard text.hasSuffix(name + "\n") || text.hasSuffix(name) else { continue }
            let bounds = text.prefix { $0 != " " }.split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { return nil }
            return start..<end
        }
        return nil
    }

    static func executable(_ pid: Int32) -> [StackSymbolizer.Mapping] {
        guard let file = fopen("/proc/\(pid)/maps", "r") else { return [] }
        defer { fclose(file) }
        var mappings: [StackSymbolizer.Mapping] = []
        var line = [CChar](repeating: 0, count: 4608)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line)
            let fields = text.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].contains("x") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16),
                let end = UInt64(range[1], radix: 16), let offset = UInt64(fields[2], radix: 16)
            else { continue }
            var path = Substring(fields[5])
            while let last = path.last, last == "\n" || last == " " { path = path.dropLast() }
            while let first = path.first, first == " " { path = path.dropFirst() }
            // The vDSO has no file; it is named, and its frames blamed on their callers.
            guard path.hasPrefix("/") || path == "[vdso]" else { continue }
            mappings.append(StackSymbolizer.Mapping(start: start, end: end, offset: offset, path: String(path)))
        }
        return mappings
    }
}
