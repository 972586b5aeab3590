#if canImport(Glibc)
import Glibc
#endif

/// The kernel's text symbols from `/proc/kallsyms`, by address: names kernel return addresses
/// (the scheduler's switch-out stacks). Read once per process, when first needed; empty without
/// readable kernel addresses (kptr_restrict, not root), and then names nothing.
public final class KernelSymbols: Sendable {
    /// Symbol start addresses, ascending, and where each name sits in `names`.
    private let starts: [UInt64]
    private let nameRanges: [Range<Int>]
    private let names: [UInt8]

    public static let shared = KernelSymbols(kallsyms: readKallsyms())

    /// From the text of a kallsyms file ("address type name[\t[module]]" per line); text
    /// symbols only (types t and T).
    public init(kallsyms text: [UInt8]) {
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
        starts = entries.map(\.start)
        nameRanges = entries.map(\.name)
        names = text
    }

    private static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        default: nil
        }
    }

    public var isEmpty: Bool { starts.isEmpty }

    /// The function holding a return address. A return address can sit just past its
    /// function's last byte (a call at the end of a function that does not return): the byte
    /// before it decides.
    public func name(returnAddress address: UInt64) -> String? {
        guard address > 0 else { return nil }
        let target = address - 1
        var low = 0, high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] <= target { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        return String(decoding: names[nameRanges[low - 1]], as: UTF8.self)
    }

    /// Names a stack of return addresses, innermost first; nil when no symbols are readable.
    public func names(_ stack: [UInt64]) -> [String]? {
        guard !isEmpty else { return nil }
        return stack.map { name(returnAddress: $0) ?? "0x" + String($0, radix: 16) }
    }

    private static func readKallsyms() -> [UInt8] {
        let fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 << 20)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        // Without permission every address reads as zero.
        return bytes.prefix(16).allSatisfy { $0 == UInt8(ascii: "0") } ? [] : bytes
    }
}
