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

    var markedCount: Int { flags.reduce(0) { $0 + ($1 ? 1 : 0) } }
}
