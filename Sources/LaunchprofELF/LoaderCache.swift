/// `/etc/ld.so.cache` in glibc's "glibc-ld.so.cache1.1" format, read by launchprof itself.
///
/// A lookup picks what glibc 2.36's loader picks: among entries with the library's name and
/// flags for this ABI, the glibc-hwcaps entry of the best supported subdirectory, else the
/// first plain entry.
public struct LoaderCache: Sendable {
    public static let defaultPath = "/etc/ld.so.cache"

    private static let oldMagic: [UInt8] = Array("ld.so-1.7.0".utf8)
    private static let newMagic: [UInt8] = Array("glibc-ld.so.cache1.1".utf8)
    private static let headerSize = 48
    private static let entrySize = 24
    private static let extensionMagic: UInt32 = 0xeaa4_2174
    /// FLAG_ELF_LIBC6 | FLAG_X8664_LIB64: what an x86-64 loader accepts (besides plain FLAG_ELF).
    private static let x8664Flags: Int32 = 0x0303
    /// Bit 62 of an entry's hwcap: the low 32 bits index the glibc-hwcaps subdirectory list.
    private static let hwcapExtension: UInt64 = 1 << 62

    private let bytes: [UInt8]
    /// Offset of the new-format header (after an old-format prefix, if any).
    private let base: Int
    public let entryCount: Int
    /// glibc-hwcaps subdirectory names the cache's entries refer to.
    public let hwcapsSubdirectories: [String]

    /// Parses a cache file's contents; throws when the header or tables are inconsistent.
    public init(bytes: [UInt8]) throws(ELFError) {
        self.bytes = bytes
        let parsed = bytes.withUnsafeBytes { raw in
            Result { () throws(ELFError) in try LoaderCache.parseHeader(ByteView(raw)) }
        }
        (self.base, self.entryCount, self.hwcapsSubdirectories) = try parsed.get()
    }

    /// Validates the header and extension; returns the new-format header's offset, the entry
    /// count and the glibc-hwcaps subdirectory names.
    private static func parseHeader(_ view: ByteView) throws(ELFError) -> (Int, Int, [String]) {
        var base = 0
        if LoaderCache.hasPrefix(view, LoaderCache.oldMagic) {
            let oldCount = Int(try view.u32(12))
            guard oldCount < view.count / 12 else {
                throw ELFError.malformed(path: "", detail: "old-format cache entry count \(oldCount) is too large")
            }
            base = (16 + oldCount * 12 + 7) & ~7
        }
        guard LoaderCache.hasPrefix(try view.slice(offset: UInt64(base), length: 20), LoaderCache.newMagic)
        else {
            throw ELFError.malformed(path: "", detail: "no glibc-ld.so.cache1.1 header")
        }
        let count = Int(try view.u32(base + 20))
        let entriesEnd = base + LoaderCache.headerSize + count * LoaderCache.entrySize
        guard count < view.count / LoaderCache.entrySize, entriesEnd <= view.count else {
            throw ELFError.truncated(path: "", detail: "\(count) cache entries do not fit in the file")
        }
        var subdirectories: [String] = []
        let extensionOffset = Int(try view.u32(base + 32))
        if extensionOffset != 0, extensionOffset >= entriesEnd - base,
            (try? view.u32(base + extensionOffset)) == LoaderCache.extensionMagic
        {
            let start = base + extensionOffset
            let sections = Int(try view.u32(start + 4))
            guard sections < view.count / 16 else {
                throw ELFError.malformed(path: "", detail: "cache extension count \(sections) is too large")
            }
            for index in 0..<sections {
                let section = start + 8 + index * 16
                guard try view.u32(section) == 1 else { continue }  // glibc-hwcaps
                let offset = Int(try view.u32(section + 8))
                let size = Int(try view.u32(section + 12))
                guard size / 4 < view.count else {
                    throw ELFError.malformed(path: "", detail: "glibc-hwcaps section size \(size) is too large")
                }
                for name in 0..<(size / 4) {
                    let stringOffset = Int(try view.u32(base + offset + name * 4))
                    subdirectories.append(try view.cString(base + stringOffset))
                }
            }
        }
        return (base, count, subdirectories)
    }

    /// The path the loader would take from the cache for `name`, or nil.
    ///
    /// - Parameter hwcaps: supported glibc-hwcaps subdirectories, best first (see `HostCapabilities`).
    public func lookup(_ name: String, hwcaps: [String]) -> String? {
        lookup(name, hwcaps: { hwcaps })
    }

    /// Like `lookup(_:hwcaps:)`, asking for the subdirectories only when a glibc-hwcaps entry
    /// for `name` exists.
    public func lookup(_ name: String, hwcaps: () -> [String]) -> String? {
        let key = Array(name.utf8)
        return bytes.withUnsafeBytes { raw in
            (try? find(key, hwcaps: hwcaps, in: ByteView(raw))) ?? nil
        }
    }

    private func entry(_ index: Int) -> Int { base + LoaderCache.headerSize + index * LoaderCache.entrySize }

    private func compare(_ key: [UInt8], _ view: ByteView, _ index: Int) throws(ELFError) -> Int {
        let offset = base + Int(try view.u32(entry(index) + 4))
        guard offset < view.count else { throw ELFError.malformed(path: "", detail: "cache key offset") }
        return LoaderCache.libraryCompare(key, UnsafeRawBufferPointer(rebasing: view.bytes[offset...]))
    }

    private func find(_ key: [UInt8], hwcaps: () -> [String], in view: ByteView) throws(ELFError) -> String? {
        // Entries are sorted in descending library order, as ldconfig writes them.
        var left = 0
        var right = entryCount - 1
        var found: Int?
        while left <= right {
            let middle = (left + right) / 2
            let order = try compare(key, view, middle)
            if order == 0 {
                found = middle
                break
            } else if order < 0 {
                left = middle + 1
            } else {
                right = middle - 1
            }
        }
        guard var index = found else { return nil }
        while index > 0, try compare(key, view, index - 1) == 0 { index -= 1 }
        var best: String?
        var bestPriority = Int.max
        var supported: [String]?
        while index < entryCount, try compare(key, view, index) == 0 {
            defer { index += 1 }
            let start = entry(index)
            let flags = Int32(bitPattern: try view.u32(start))
            guard flags == 1 || flags == LoaderCache.x8664Flags else { continue }
            let valueOffset = base + Int(try view.u32(start + 8))
            let hwcap = try view.u64(start + 16)
            if hwcap & LoaderCache.hwcapExtension != 0 {
                let subdirectory = Int(hwcap & 0xffff_ffff)
                if supported == nil { supported = hwcaps() }
                guard subdirectory < hwcapsSubdirectories.count,
                    let priority = supported?.firstIndex(of: hwcapsSubdirectories[subdirectory])
                else { continue }
                if priority < bestPriority {
                    best = try view.cString(valueOffset)
                    bestPriority = priority
                }
                continue
            }
            // glibc-hwcaps entries come first; a plain entry ends the search when one matched.
            if best != nil { break }
            // Legacy hwcap or platform entries are not selected (glibc 2.37 drops them).
            guard hwcap == 0 else { continue }
            best = try view.cString(valueOffset)
            if flags == LoaderCache.x8664Flags { break }
        }
        return best
    }

    private static func hasPrefix(_ view: ByteView, _ prefix: [UInt8]) -> Bool {
        guard view.count >= prefix.count else { return false }
        for (index, byte) in prefix.enumerated() where view.bytes[index] != byte { return false }
        return true
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// glibc's `_dl_cache_libcmp`: byte order, except runs of digits compare as numbers.
    /// `rhs` is NUL-terminated (or ends with the buffer).
    static func libraryCompare(_ lhs: [UInt8], _ rhs: UnsafeRawBufferPointer) -> Int {
        var i = 0
        var j = 0
        func at(_ k: Int) -> UInt8 { k < rhs.count ? rhs[k] : 0 }
        func left(_ k: Int) -> UInt8 { k < lhs.count ? lhs[k] : 0 }
        while left(i) != 0 {
            let a = left(i)
            let b = at(j)
            if isDigit(a) {
                guard isDigit(b) else { return 1 }
                var value1 = 0
                var value2 = 0
                while isDigit(left(i)) {
                    value1 = min(value1 &* 10 &+ Int(left(i) - 0x30), Int(Int32.max))
                    i += 1
                }
                while isDigit(at(j)) {
                    value2 = min(value2 &* 10 &+ Int(at(j) - 0x30), Int(Int32.max))
                    j += 1
                }
                if value1 != value2 { return value1 - value2 }
            } else if isDigit(b) {
                return -1
            } else if a != b {
                return Int(a) - Int(b)
            } else {
                i += 1
                j += 1
            }
        }
        return Int(left(i)) - Int(at(j))
    }
}

