/// One flag per 4 KiB page of a file: the pages of a scope member that lookups read. A raw
/// buffer (the walk marks pages through a pointer, with no copy-on-write checks in its hottest
/// loop) that frees itself.
final class PageFlags: @unchecked Sendable {
    let flags: UnsafeMutableBufferPointer<Bool>

    init(count: Int) {
        flags = .allocate(capacity: count)
        flags.initialize(repeating: false)
    }

    deinit { flags.deallocate() }

    var markedCount: Int { Self.count(UnsafeRawBufferPointer(flags), in: 0..<flags.count) }

    /// How many of `flags[range]` are set: eight at a time (a Bool is one byte, 0 or 1; gdb's
    /// closure has 20,000 pages, counted and then scanned by fault window).
    static func count(_ flags: UnsafeRawBufferPointer, in range: Range<Int>) -> Int {
        var total = 0
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            // The eight bytes' sum lands in the top byte.
            total += Int((flags.loadUnaligned(fromByteOffset: index, as: UInt64.self) &* 0x0101_0101_0101_0101) >> 56)
            index += 8
        }
        while index < range.upperBound {
            total += Int(flags[index])
            index += 1
        }
        return total
    }
}
