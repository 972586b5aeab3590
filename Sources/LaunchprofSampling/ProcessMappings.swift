#if canImport(Glibc)
import Glibc
#endif

/// The one reader of `/proc/PID/maps`: read in one go, parsed as bytes. The tracer, the hazard
/// scanner, the sampler and the uprobe calibration all ask it.
public enum ProcessMappings {
    /// One line: "start-end perms offset dev inode   name".
    public struct Line: Sendable, Equatable {
        public var start: UInt64
        public var end: UInt64
        /// The file offset mapped at `start`.
        public var offset: UInt64
        /// "r-xp" and the like.
        public var permissions: String
        /// A file's path (with " (deleted)" when the kernel adds it), `[vdso]`, `[heap]`, or
        /// empty for an anonymous mapping. Spaces inside a path are kept.
        public var name: String

        public init(start: UInt64, end: UInt64, offset: UInt64, permissions: String, name: String) {
            self.start = start
            self.end = end
            self.offset = offset
            self.permissions = permissions
            self.name = name
        }

        public var isExecutable: Bool { permissions.contains("x") }
        /// A file, named by its absolute path.
        public var isFile: Bool { name.hasPrefix("/") }
        public var mapping: StackSymbolizer.Mapping { .init(start: start, end: end, offset: offset, path: name) }
    }

    /// Every line of `pid`'s maps; empty when the process is gone or unreadable.
    public static func lines(_ pid: Int32) -> [Line] {
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return parse(bytes)
    }

    /// File-backed mappings of `pid`.
    public static func files(_ pid: Int32) -> [StackSymbolizer.Mapping] {
        lines(pid).filter(\.isFile).map(\.mapping)
    }

    /// Executable mappings of files, and the vDSO (named `[vdso]`).
    static func executable(_ pid: Int32) -> [StackSymbolizer.Mapping] {
        lines(pid).filter { $0.isExecutable && ($0.isFile || $0.name == "[vdso]") }.map(\.mapping)
    }

    /// The address range of the mapping named `name` (`[vdso]`) in `pid`.
    static func range(of name: String, in pid: Int32) -> Range<UInt64>? {
        lines(pid).first { $0.name == name }.map { $0.start..<$0.end }
    }

    /// The lines of a maps file's text; malformed lines are skipped.
    public static func parse(_ bytes: [UInt8]) -> [Line] {
        bytes.split(separator: UInt8(ascii: "\n")).compactMap { raw -> Line? in
            let fields = raw.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { return nil }
            let range = fields[0].split(separator: UInt8(ascii: "-"))
            guard range.count == 2, let start = hex(range[0]), let end = hex(range[1]), let offset = hex(fields[2]) else {
                return nil
            }
            // The name is padded to a column; what follows the padding is the name verbatim.
            var name = fields.count == 6 ? fields[5][...] : []
            while name.first == UInt8(ascii: " ") { name = name.dropFirst() }
            return Line(
                start: start, end: end, offset: offset, permissions: String(decoding: fields[1], as: UTF8.self),
                name: String(decoding: name, as: UTF8.self))
        }
    }

    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
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
