#if canImport(Glibc)
import Glibc
#endif

/// Names the system call a thread blocked in from the kernel frames of its switch-out sample:
/// the innermost frame inside a system call's entry function (`__x64_sys_poll` → `poll`), looked
/// up in `/proc/kallsyms`. Read once per process, when first needed (after a launch); without
/// readable kernel addresses (kptr_restrict) it names nothing.
public struct KernelSyscallNames: Sendable {
    private struct Entry: Sendable {
        var start: UInt64, end: UInt64
        var name: String
    }

    /// The entry functions, by address, each up to the next kernel symbol.
    private let entries: [Entry]

    public static let shared = KernelSyscallNames(kallsyms: Self.readKallsyms())

    /// From the text of a kallsyms file ("address type name[\t[module]]" per line).
    public init(kallsyms text: [UInt8]) {
        let prefix = Array("__x64_sys_".utf8)
        var starts: [UInt64] = []
        var named: [(start: UInt64, name: String)] = []
        text.withUnsafeBufferPointer { bytes in
            var index = 0
            while index < bytes.count {
                // The address: hex digits up to a space.
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
                    starts.append(address)
                    var nameEnd = nameStart
                    while nameEnd < end, bytes[nameEnd] != UInt8(ascii: "\t") { nameEnd += 1 }
                    let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd])
                    if name.count > prefix.count, name.starts(with: prefix) {
                        named.append((address, String(decoding: name.dropFirst(prefix.count), as: UTF8.self)))
                    }
                }
                index = end + 1
            }
        }
        starts.sort()
        entries = named.sorted { $0.start < $1.start }.map { entry in
            // The function ends where the next symbol starts.
            var low = 0, high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] <= entry.start { low = middle + 1 } else { high = middle }
            }
            return Entry(start: entry.start, end: low < starts.count ? starts[low] : entry.start &+ 4096, name: entry.name)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        default: nil
        }
    }

    /// The system call whose entry function holds one of `frames` (return addresses, innermost
    /// first), or nil when none does (preempted, a page fault, a kernel thread).
    public func name(kernelFrames frames: [UInt64]) -> String? {
        for address in frames {
            var low = 0, high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].start <= address { low = middle + 1 } else { high = middle }
            }
            // A return address can sit just past its function's last byte (a tail call): look
            // one byte back.
            if low > 0, entries[low - 1].start < address, address &- 1 < entries[low - 1].end { return entries[low - 1].name }
        }
        return nil
    }

    public var isEmpty: Bool { entries.isEmpty }

    private static func readKallsyms() -> [UInt8] {
        let fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
