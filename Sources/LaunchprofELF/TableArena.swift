#if canImport(Glibc)
import Glibc
#endif

/// Zeroed memory for an analysis's large tables (the name table, the candidate index), asked of
/// the kernel as one transparent huge page where it allows (`madvise` mode, the usual default).
///
/// Fresh memory is paid for when first touched: ~1.2 µs per 4 KiB page on our hosts (a zeroed
/// page, charged to the cgroup), ~0.3 ms for the ~0.6 MiB of tables gdb's closure needs, on the
/// scanner's thread, which the resolver then waits for; a 2 MiB page costs ~50 µs. Where huge
/// pages are off the arena is ordinary zeroed memory, faulted in page by page as before.
///
/// Bump allocation, by one thread at a time: nothing is freed before the arena, which its
/// tables keep alive.
final class TableArena: @unchecked Sendable {
    static let hugePageBytes = 2 << 20

    private let mapping: UnsafeMutableRawPointer?
    private let mappingBytes: Int
    private var next: Int
    private let end: Int

    /// Room for `bytes` (a multiple of 2 MiB), reserved: the kernel zeroes the huge page at the
    /// first write. (Touching it at once, while the scanner waits for the program, was measured
    /// no faster: the zeroing then holds up the other thread's own memory mappings.)
    init(bytes: Int = TableArena.hugePageBytes) {
        // 2 MiB more than asked, so that a 2 MiB-aligned window fits: only aligned 2 MiB ranges
        // can be huge pages. The rest is address space only, never touched.
        mappingBytes = bytes + TableArena.hugePageBytes
        let mapped = mmap(nil, mappingBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let mapped, mapped != MAP_FAILED else {
            mapping = nil
            next = 0
            end = 0
            return
        }
        mapping = mapped
        let alignment = TableArena.hugePageBytes
        let aligned = (Int(bitPattern: mapped) + alignment - 1) & ~(alignment - 1)
        _ = madvise(UnsafeMutableRawPointer(bitPattern: aligned), bytes, MADV_HUGEPAGE)
        next = aligned
        end = aligned + bytes
    }

    deinit {
        if let mapping { munmap(mapping, mappingBytes) }
    }

    /// All the room left, zeroed (and, in a huge page, already faulted in), taken from the arena.
    func remainder() -> UnsafeMutableRawBufferPointer? {
        guard mapping != nil, next < end else { return nil }
        defer { next = end }
        return UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: next), count: end - next)
    }

    /// `count` zeroed integers from `arena` when it has room, else from the heap (then the
    /// caller frees them); `inArena` says which.
    static func zeroed<Element: FixedWidthInteger>(
        _: Element.Type, count: Int, in arena: TableArena?
    ) -> (pointer: UnsafeMutablePointer<Element>, inArena: Bool) {
        if let fresh = arena?.allocate(Element.self, count: count) { return (fresh, true) }
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: count)
        fresh.initialize(repeating: 0, count: count)
        return (fresh, false)
    }

    /// `count` zeroed elements, or nil when the arena has no room left (the caller allocates).
    func allocate<Element>(_: Element.Type, count: Int) -> UnsafeMutablePointer<Element>? {
        let alignment = max(MemoryLayout<Element>.alignment, 64)
        let start = (next + alignment - 1) & ~(alignment - 1)
        let bytes = count * MemoryLayout<Element>.stride
        guard mapping != nil, bytes <= end - start else { return nil }
        next = start + bytes
        return UnsafeMutablePointer(bitPattern: start)
    }
}
