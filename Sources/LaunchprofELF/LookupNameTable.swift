#if canImport(Glibc)
import Glibc
#endif

/// The distinct names (with their lookup class) a closure's relocations look up, each with a
/// number in order of first appearance, so that each name's walk through the scope is done once
/// per closure and all walks can be done together, scope member by scope member.
///
/// An open-addressing table on the GNU hash the lookup has computed anyway, grown as names
/// arrive. A Swift `Dictionary` keyed on the name seeded and ran SipHash for every lookup, and
/// reserving room for every symbol of the closure zeroed 5 MB of pages for gdb.
final class LookupNameTable {
    /// One name: where it is (in one of the closure's mapped string tables, alive while the
    /// closure is, NUL-terminated there), its hash, and its number + 1 (0: the slot is empty).
    private struct Slot {
        var name: UnsafeRawPointer?
        var hash: UInt32
        var number: Int32
    }

    // Used from one thread, by one analysis: no dynamic exclusivity checks in the lookup path.
    @exclusivity(unchecked) private var slots: UnsafeMutableBufferPointer<Slot>
    @exclusivity(unchecked) private var mask: Int
    /// By number: the name, its GNU hash and its lookup class.
    @exclusivity(unchecked) private(set) var names: [UnsafeRawBufferPointer] = []
    @exclusivity(unchecked) private(set) var hashes: [UInt32] = []
    @exclusivity(unchecked) private(set) var classes: [UInt8] = []

    /// Room for `expectedNames` at under half load (it grows past that).
    init(expectedNames: Int) {
        var size = 64
        while size < expectedNames * 2, size < 1 << 24 { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: Slot(name: nil, hash: 0, number: 0))
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
        let key = Self.key(hash, lookupClass)
        var index = Self.start(key) & mask
        while true {
            let slot = slots[index]
            guard slot.number != 0 else { break }
            if slot.hash == hash, classes[Int(slot.number) - 1] == UInt8(truncatingIfNeeded: lookupClass),
                Self.isName(slot.name, name)
            {
                return Int(slot.number) - 1
            }
            index = (index + 1) & mask
        }
        let number = names.count
        slots[index] = Slot(name: name.baseAddress, hash: hash, number: Int32(truncatingIfNeeded: number + 1))
        names.append(name)
        hashes.append(hash)
        classes.append(UInt8(truncatingIfNeeded: lookupClass))
        if names.count * 2 > slots.count { grow() }
        return number
    }

    /// Whether the NUL-terminated name at `stored` is `name`.
    private static func isName(_ stored: UnsafeRawPointer?, _ name: UnsafeRawBufferPointer) -> Bool {
        guard let stored else { return false }
        guard name.count > 0, let bytes = name.baseAddress else { return stored.load(as: UInt8.self) == 0 }
        return memcmp(stored, bytes, name.count) == 0 && stored.load(fromByteOffset: name.count, as: UInt8.self) == 0
    }

    private static func key(_ hash: UInt32, _ lookupClass: Int) -> UInt64 {
        UInt64(hash) | UInt64(truncatingIfNeeded: lookupClass) << 32
    }

    /// Fibonacci hashing spreads the GNU hash's low bits, which differ little between names
    /// that share a prefix.
    private static func start(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    private func grow() {
        let old = slots
        slots = .allocate(capacity: old.count * 2)
        slots.initialize(repeating: Slot(name: nil, hash: 0, number: 0))
        mask = slots.count - 1
        for slot in old where slot.number != 0 {
            var index = Self.start(Self.key(slot.hash, Int(classes[Int(slot.number) - 1]))) & mask
            while slots[index].number != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        old.deallocate()
    }
}
