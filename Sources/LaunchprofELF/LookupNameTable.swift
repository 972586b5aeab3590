#if canImport(Glibc)
import Glibc
#endif

/// The distinct names (with their lookup class) a closure's relocations look up, each with a
/// number in order of first appearance, so that each name's walk through the scope is done once
/// per closure and all walks can be done together.
///
/// An open-addressing table on the GNU hash the lookup has computed anyway. A Swift `Dictionary`
/// keyed on the name seeded and ran SipHash for every lookup. Each slot is 8 bytes (hash and
/// number): the table is freshly faulted-in memory, so its size is paid for in page faults.
final class LookupNameTable {
    /// Per slot: the GNU hash in the high half, the name's number + 1 in the low half (0: empty).
    // Used from one thread, by one analysis: no dynamic exclusivity checks in the lookup path.
    @exclusivity(unchecked) private var slots: UnsafeMutableBufferPointer<UInt64>
    @exclusivity(unchecked) private var mask: Int
    /// By number: the name (in one of the closure's mapped string tables, alive while the
    /// closure is, NUL-terminated there), its GNU hash and its lookup class.
    @exclusivity(unchecked) private(set) var names: [UnsafeRawBufferPointer] = []
    @exclusivity(unchecked) private(set) var hashes: [UInt32] = []
    @exclusivity(unchecked) private(set) var classes: [UInt8] = []

    /// Room for `expectedNames` at under 3/4 load (it grows past that).
    init(expectedNames: Int) {
        var size = 64
        while size * 3 < expectedNames * 4, size < 1 << 24 { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: 0)
        mask = size - 1
        names.reserveCapacity(expectedNames)
        hashes.reserveCapacity(expectedNames)
        classes.reserveCapacity(expectedNames)
    }

    deinit {
        slots.deallocate()
    }

    var count: Int { names.count }

    /// The name's number, given to it now if it is new. `lookupClass` is 0, 1 or 2.
    func number(_ name: UnsafeRawBufferPointer, hash: UInt32, lookupClass: Int) -> Int {
        var index = Self.start(hash | 1) & mask
        while true {
            let slot = slots[index]
            guard slot != 0 else { break }
            let number = Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: slot)) - 1
            if UInt32(truncatingIfNeeded: slot >> 32) == hash,
                classes[number] == UInt8(truncatingIfNeeded: lookupClass), Self.isName(names[number], name)
            {
                return number
            }
            index = (index + 1) & mask
        }
        let number = names.count
        slots[index] = UInt64(hash) << 32 | UInt64(number + 1)
        names.append(name)
        hashes.append(hash)
        classes.append(UInt8(truncatingIfNeeded: lookupClass))
        if names.count * 4 > slots.count * 3 { grow() }
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

    /// Whether the stored name (NUL-terminated in its string table) is `name`.
    private static func isName(_ stored: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Bool {
        guard stored.count == name.count else { return false }
        guard name.count > 0, let left = stored.baseAddress, let right = name.baseAddress else { return true }
        return memcmp(left, right, name.count) == 0
    }

    /// Fibonacci hashing spreads the GNU hash's low bits, which differ little between names
    /// that share a prefix. The start ignores the lookup class and the hash's bit 0, so that
    /// `forEachName(withKey:)` finds every name of a key in one run of slots.
    private static func start(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    private func grow() {
        let old = slots
        slots = .allocate(capacity: old.count * 2)
        slots.initialize(repeating: 0)
        mask = slots.count - 1
        for slot in old where slot != 0 {
            var index = Self.start(UInt32(truncatingIfNeeded: slot >> 32) | 1) & mask
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        old.deallocate()
    }
}
