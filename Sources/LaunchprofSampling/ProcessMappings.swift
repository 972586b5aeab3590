#if canImport(Glibc)
import Glibc
#endif

/// Mappings of a process, from `/proc/PID/maps`, read in one go and parsed as bytes.
enum ProcessMappings {
    /// Executable mappings of files, and the vDSO (named `[vdso]`).
    static func executable(_ pid: Int32) -> [StackSymbolizer.Mapping] {
        lines(pid).compactMap { line in
            guard line.permissions.contains("x"), line.path.hasPrefix("/") || line.path == "[vdso]" else { return nil }
            return StackSymbolizer.Mapping(start: line.start, end: line.end, offset: line.offset, path: line.path)
        }
    }

    /// The address range of the mapping named `name` (`[vdso]`) in `pid`.
    static func range(of name: String, in pid: Int32) -> Range<UInt64>? {
        lines(pid).first { $0.path == name }.map { $0.start..<$0.end }
    }

    private struct Line {
        var start: UInt64, end: UInt64, offset: UInt64
        var permissions: String
        var path: String
    }

    private static func lines(_ pid: Int32) -> [Line] {
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        // "start-end perms offset dev inode   path"
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { raw -> Line? in
            let fields = raw.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { return nil }
            let range = fields[0].split(separator: UInt8(ascii: "-"))
            guard range.count == 2, let start = hex(range[0]), let end = hex(range[1]), let offset = hex(fields[2]) else {
                return nil
            }
            var path = fields.count == 6 ? fields[5][...] : []
            while path.first == UInt8(ascii: " ") { path = path.dropFirst() }
            return Line(
                start: start, end: end, offset: offset, permissions: String(decoding: fields[1], as: UTF8.self),
                path: String(decoding: path, as: UTF8.self))
        }
    }

    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}
