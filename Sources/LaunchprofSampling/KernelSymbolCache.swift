import LaunchprofSystem

#if canImport(Glibc)
import Glibc
#endif

/// The parsed kernel text symbols of this boot, kept in the user's private directory
/// (`PrivateDirectory.standardPath`, mode 0700, the file 0600): the kernel spends ~40 ms
/// generating `/proc/kallsyms` on every read, which every launchprof that names a kernel stack
/// (thread states, by default as root) paid once per invocation.
///
/// Valid for one boot (its `boot_id`: KASLR moves the kernel at each boot) and one set of loaded
/// modules (`/proc/modules`, whose text is the fingerprint); anything else is read afresh and
/// replaces it. The file is read as untrusted bytes, bounds-checked; a damaged one is ignored.
/// Symbols the kernel adds at run time (BPF programs, trampolines) are not in a cached table:
/// none of them is a frame of the scheduler's switch-out stacks this names.
struct KernelSymbolCache: Sendable {
    /// The directory it lives in.
    var directory: String
    /// This boot's identity, in the file's name.
    var bootID: String
    /// What else must match: the loaded modules.
    var fingerprint: [UInt8]

    private static let magic = Array("launchprof kernel symbols 1\n".utf8)
    /// More than any kernel has (~200,000 text symbols with modules), so a damaged count is refused.
    private static let maxSymbols = 4 << 20
    private static let maxNameBytes = 256 << 20

    /// This boot's cache where the private directory is usable; nil elsewhere.
    static var standard: KernelSymbolCache? {
        guard let boot = SmallFile.bytes("/proc/sys/kernel/random/boot_id", limit: 64) else { return nil }
        let bootID = String(decoding: boot.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard !bootID.isEmpty, bootID.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || isHexDigit($0) }) else { return nil }
        // No /proc/modules: a kernel without loadable modules.
        let modules = SmallFile.bytes("/proc/modules", limit: 1 << 20) ?? []
        return KernelSymbolCache(directory: PrivateDirectory.standardPath, bootID: bootID, fingerprint: modules)
    }

    private var fileName: String { "kallsyms-\(bootID).cache" }

    /// The cached table, or nil when there is none, it is another module set's, or damaged.
    func load() -> KernelSymbols.Table? {
        guard let directory = try? PrivateDirectory.open(directory, create: false),
            let bytes = SmallFile.bytes(directory.entry(fileName), limit: 64 << 20)
        else { return nil }
        var reader = Reader(bytes: bytes)
        guard reader.take(Self.magic.count) == Self.magic[...],
            let fingerprintCount = reader.u32(), reader.take(Int(fingerprintCount)) == fingerprint[...],
            let count = reader.u32().map(Int.init), count <= Self.maxSymbols
        else { return nil }
        var table = KernelSymbols.Table()
        table.starts.reserveCapacity(count)
        table.nameEnds.reserveCapacity(count)
        for _ in 0..<count {
            guard let start = reader.u64(), start >= (table.starts.last ?? 0) else { return nil }
            table.starts.append(start)
        }
        for _ in 0..<count {
            guard let end = reader.u32(), end >= (table.nameEnds.last ?? 0) else { return nil }
            table.nameEnds.append(end)
        }
        guard let nameCount = reader.u32().map(Int.init), nameCount <= Self.maxNameBytes,
            nameCount == Int(table.nameEnds.last ?? 0), let names = reader.take(nameCount), reader.isAtEnd
        else { return nil }
        table.names = Array(names)
        return table
    }

    /// Stores `table` (not an empty one: kernel addresses were unreadable), replacing this
    /// user's caches of other boots. Best effort: a cache that cannot be written is not one.
    func store(_ table: KernelSymbols.Table) {
        guard !table.starts.isEmpty, let directory = try? PrivateDirectory.open(directory, create: true) else { return }
        var bytes = Self.magic
        Self.append(UInt32(fingerprint.count), to: &bytes)
        bytes += fingerprint
        Self.append(UInt32(table.starts.count), to: &bytes)
        for start in table.starts { Self.append(start, to: &bytes) }
        for end in table.nameEnds { Self.append(end, to: &bytes) }
        Self.append(UInt32(table.names.count), to: &bytes)
        bytes += table.names
        // Written under a name of its own, then renamed over the cache: a reader sees the old
        // file or the whole new one.
        let temporary = directory.entry("\(fileName).\(getpid())")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count, rename(temporary, directory.entry(fileName)) == 0 else {
            unlink(temporary)
            return
        }
        removeOtherBoots(directory)
    }

    private func removeOtherBoots(_ directory: PrivateDirectory) {
        guard let listing = opendir(directory.entry(".")) else { return }
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("kallsyms-"), name.hasSuffix(".cache"), name != fileName { unlink(directory.entry(name)) }
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// Little-endian fields from untrusted bytes: nil past the end.
    private struct Reader {
        var bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func u32() -> UInt32? {
            take(4).map { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        }

        mutating func u64() -> UInt64? {
            take(8).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        }
    }
}
