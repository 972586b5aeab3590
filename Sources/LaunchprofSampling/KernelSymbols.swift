import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's text symbols from `/proc/kallsyms`, by address: names kernel return addresses
/// (the scheduler's switch-out stacks, the system call a sampled thread blocked in). Read once
/// per boot (`KernelSymbolCache`) and loaded once per process, when the first name is asked for
/// (a process that records no kernel stack never reads it), keeping each text symbol's start and
/// name only (not the file's 5 MB of text).
/// Names nothing without readable kernel addresses (kptr_restrict, not root).
public final class KernelSymbols: Sendable {
    /// Symbol starts, ascending, and each one's name in `names` (`nameEnds[i - 1] ..< nameEnds[i]`).
    struct Table: Sendable {
        var starts: [UInt64] = []
        var nameEnds: [UInt32] = []
        var names: [UInt8] = []

        func name(_ index: Int) -> String {
            let start = index == 0 ? 0 : Int(nameEnds[index - 1])
            return String(decoding: names[start..<Int(nameEnds[index])], as: UTF8.self)
        }
    }

    private let readText: @Sendable () -> [UInt8]
    private let cache: @Sendable () -> KernelSymbolCache?
    private let table = Mutex<Table?>(nil)

    /// This process's: from this boot's cache when there is one, else from /proc/kallsyms.
    public static let shared = KernelSymbols(reading: readKallsyms, cache: { KernelSymbolCache.standard })

    /// From the text of a kallsyms file ("address type name[\t[module]]" per line).
    public convenience init(kallsyms text: [UInt8]) {
        self.init(reading: { text })
    }

    /// `read` gives the kallsyms text when a name is first asked for, unless `cache` has the
    /// table; a table read is stored there.
    init(reading read: @escaping @Sendable () -> [UInt8], cache: @escaping @Sendable () -> KernelSymbolCache? = { nil }) {
        self.readText = read
        self.cache = cache
    }

    /// Parses the text symbols (types t and T) of a kallsyms text.
    static func parse(_ text: [UInt8]) -> Table {
        var entries: [(start: UInt64, name: Range<Int>)] = []
        entries.reserveCapacity(text.count / 40)
        text.withUnsafeBufferPointer { bytes in
            var index = 0
            while index < bytes.count {
                var address: UInt64 = 0
                while index < bytes.count, let digit = Self.hexValue(bytes[index]) {
                    address = address << 4 | digit
                    index += 1
                }
                let type = index + 1 < bytes.count ? bytes[index + 1] : 0
                let nameStart = index + 3
                var end = nameStart
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                if address != 0, type == UInt8(ascii: "t") || type == UInt8(ascii: "T"), nameStart < end {
                    var nameEnd = nameStart
                    while nameEnd < end, bytes[nameEnd] != UInt8(ascii: "\t") { nameEnd += 1 }
                    entries.append((address, nameStart..<nameEnd))
                }
                index = end + 1
            }
        }
        // kallsyms lists the kernel in address order, then the modules; a stable sort keeps the
        // first of several names at one address.
        if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].start <= entries[$0].start }) {
            entries = entries.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        }
        var table = Table()
        table.starts = entries.map(\.start)
        table.nameEnds.reserveCapacity(entries.count)
        table.names.reserveCapacity(entries.count * 24)
        for entry in entries {
            table.names += text[entry.name]
            table.nameEnds.append(UInt32(table.names.count))
        }
        return table
    }

    private static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        default: nil
        }
    }

    private func withTable<Result: Sendable>(_ body: (Table) -> Result) -> Result {
        table.withLock { table in
            if table == nil {
                let cache = cache()
                if let cached = cache?.load() {
                    table = cached
                } else {
                    let parsed = Self.parse(readText())
                    cache?.store(parsed)
                    table = parsed
                }
            }
            return body(table!)
        }
    }

    public var isEmpty: Bool { withTable { $0.starts.isEmpty } }

    /// The index of the function holding a return address. A return address can sit just past
    /// its function's last byte (a call at the end of a function that does not return): the
    /// byte before it decides.
    private static func index(_ table: Table, returnAddress address: UInt64) -> Int? {
        guard address > 0 else { return nil }
        let target = address - 1
        var low = 0, high = table.starts.count
        while low < high {
            let middle = (low + high) / 2
            if table.starts[middle] <= target { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? low - 1 : nil
    }

    /// The function holding a return address.
    public func name(returnAddress address: UInt64) -> String? {
        withTable { table in Self.index(table, returnAddress: address).map { table.name($0) } }
    }

    /// Names a stack of return addresses, innermost first; nil when no symbols are readable.
    public func names(_ stack: [UInt64]) -> [String]? {
        withTable { table in
            guard !table.starts.isEmpty else { return nil }
            return stack.map { address in
                Self.index(table, returnAddress: address).map { table.name($0) } ?? "0x" + String(address, radix: 16)
            }
        }
    }

    /// The system call whose entry function (`__x64_sys_poll` → `poll`) holds the innermost of
    /// `frames` that is in one (return addresses, innermost first); nil when none is
    /// (preempted, a page fault, a kernel thread).
    public func syscallName(kernelFrames frames: [UInt64]) -> String? {
        let prefix = Array("__x64_sys_".utf8)
        return withTable { table in
            for address in frames {
                guard let index = Self.index(table, returnAddress: address) else { continue }
                let start = index == 0 ? 0 : Int(table.nameEnds[index - 1])
                let name = table.names[start..<Int(table.nameEnds[index])]
                if name.count > prefix.count, name.starts(with: prefix) {
                    return String(decoding: name.dropFirst(prefix.count), as: UTF8.self)
                }
            }
            return nil
        }
    }

    private static func readKallsyms() -> [UInt8] {
        let fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 << 20)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        // Without permission every address reads as zero.
        return bytes.prefix(16).allSatisfy { $0 == UInt8(ascii: "0") } ? [] : bytes
    }
}
