#if canImport(Glibc)
import Glibc
#endif

/// The distinct names (with their lookup class) a closure's relocations look up, each with a
/// number in order of first appearance, so that each name's walk through the scope is done once
/// per closure and all walks can be done together.
///
/// An open-addressing table on the GNU hash the lookup has computed anyway. A Swift `Dictionary`
/// keyed on the name seeded and ran SipHash for every lookup. The memory is freshly faulted-in
/// pages, paid for one by one: slots are 8 bytes (hash and number), names are 16 (where, how
/// long, hash) and grow with `realloc`, which moves a large block's pages instead of copying
/// them into new ones as an array's growth does.
final class LookupNameTable {
    /// One name: in one of the closure's mapped string tables (alive while the closure is),
    /// its length and its GNU hash.
    struct Name {
        var start: UnsafeRawPointer?
        var length: UInt32
        var hash: UInt32
    }

    /// Per slot: the GNU hash in the high half, the name's number + 1 in the low half (0: empty).
    // Used from one thread, by one analysis: no dynamic exclusivity checks in the lookup path.
    @exclusivity(unchecked) private var slots: UnsafeMutableBufferPointer<UInt64>
    @exclusivity(unchecked) private var mask: Int
    /// By number: the name and its lookup class, `count` of `capacity` in use.
    @exclusivity(unchecked) private var entries: UnsafeMutablePointer<Name>
    @exclusivity(unchecked) private var lookupClasses: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    /// Room for `expectedNames` at under 3/4 load (it grows past that).
    init(expectedNames: Int) {
        var size = 64
        while size * 3 < expectedNames * 4, size < 1 << 24 { size <<= 1 }
        mask = size - 1
        capacity = max(expectedNames, 16)
        slots = Self.zeroedSlots(size)
        entries = Self.resized(nil, to: capacity)
        lookupClasses = Self.resized(nil, to: capacity)
    }

    deinit {
        slots.deallocate()
        free(entries)
        free(lookupClasses)
    }

    func name(_ number: Int) -> UnsafeRawBufferPointer {
        let entry = entries[number]
        return UnsafeRawBufferPointer(start: entry.start, count: Int(entry.length))
    }

    func hash(_ number: Int) -> UInt32 { entries[number].hash }

    /// 0 (GLOB_DAT and the like), 1 (PLT: jump slots, TLS) or 2 (copy relocations).
    func lookupClass(_ number: Int) -> UInt8 { lookupClasses[number] }

    /// The name's number, given to it now if it is new. `lookupClass` is 0, 1 or 2.
    func number(_ name: UnsafeRawBufferPointer, hash: UInt32, lookupClass: Int) -> Int {
        var index = Self.start(hash | 1) & mask
        while true {
            let slot = slots[index]
            guard slot != 0 else { break }
            let number = Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: slot)) - 1
            if UInt32(truncatingIfNeeded: slot >> 32) == hash,
                lookupClasses[number] == UInt8(truncatingIfNeeded: lookupClass), Self.isName(entries[number], name)
            {
                return number
            }
            index = (index + 1) & mask
        }
        let number = count
        if count == capacity {
            capacity *= 2
            entries = Self.resized(entries, to: capacity)
            lookupClasses = Self.resized(lookupClasses, to: capacity)
        }
        slots[index] = UInt64(hash) << 32 | UInt64(number + 1)
        entries[number] = Name(start: name.baseAddress, length: UInt32(truncatingIfNeeded: name.count), hash: hash)
        lookupClasses[number] = UInt8(truncatingIfNeeded: lookupClass)
        count += 1
        if count * 4 > slots.count * 3 { grow() }
        return number
    }

    /// Calls `body` with the number of each name whose hash is `key` but in bit 0 (`key` has
    /// bit 0 set). Such names all start probing at the same slot and sit before the next empty
    /// one (slots are never emptied).
    func forEachName(withKey key: UInt32, _ body: (Int) -> Void) {
        var index = Self.start(key) & mask
        while true {
            let slot = slots[index]
            guard slot != 0 else { return }
            if UInt32(truncatingIfNeeded: slot >> 32) | 1 == key {
                body(Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: slot)) - 1)
            }
            index = (index + 1) & mask
        }
    }

    /// Whether the stored name is `name`.
    private static func isName(_ stored: Name, _ name: UnsafeRawBufferPointer) -> Bool {
        guard Int(stored.length) == name.count else { return false }
        guard name.count > 0, let left = stored.start, let right = name.baseAddress else { return true }
        return memcmp(left, right, name.count) == 0
    }

    /// `pointer` (nil: none yet; its elements are trivial) with room for `count` elements.
    private static func resized<Element>(_ pointer: UnsafeMutablePointer<Element>?, to count: Int) -> UnsafeMutablePointer<Element> {
        if let raw = realloc(pointer, count * MemoryLayout<Element>.stride) {
            return raw.bindMemory(to: Element.self, capacity: count)
        }
        // No room to grow in place or by remapping: Swift's own allocation, which ends the
        // program as any allocation does when memory is exhausted.
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: count)
        if let pointer {
            fresh.initialize(from: pointer, count: count / 2)
            free(pointer)
        }
        return fresh
    }

    /// `count` empty slots.
    private static func zeroedSlots(_ count: Int) -> UnsafeMutableBufferPointer<UInt64> {
        let slots = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
        slots.initialize(repeating: 0)
        return slots
    }

    /// Fibonacci hashing spreads the GNU hash's low bits, which differ little between names
    /// that share a prefix. The start ignores the lookup class and the hash's bit 0, so that
    /// `forEachName(withKey:)` finds every name of a key in one run of slots.
    private static func start(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    private func grow() {
        let old = slots
        slots = Self.zeroedSlots(old.count * 2)
        mask = slots.count - 1
        for slot in old where slot != 0 {
            var index = Self.start(UInt32(truncatingIfNeeded: slot >> 32) | 1) & mask
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        old.deallocate()
    }
}
