#if canImport(Glibc)
import Glibc
#endif

/// Name and lookup class → how many scope members a lookup of it searches (its first definer's
/// position + 1), filled as a closure's lookups first walk each name.
///
/// An open-addressing table on the GNU hash the lookup has computed anyway, grown as names
/// arrive. A Swift `Dictionary` keyed on the name seeded and ran SipHash for every lookup, and
/// reserving room for every symbol of the closure zeroed 5 MB of pages for gdb — the largest
/// single cost of `inspect` after the walk itself.
final class FirstDefinerTable {
    /// One name: where it is (in one of the closure's mapped string tables, alive while the
    /// closure is), its hash and class, and its steps (0: the slot is empty).
    private struct Slot {
        var name: UnsafeRawPointer?
        var length: Int32
        var hash: UInt32
        var lookupClass: Int32
        var steps: Int32
    }

    private var slots: UnsafeMutableBufferPointer<Slot>
    private var mask: Int
    private(set) var count = 0

    /// Room for `expectedNames` at under half load (it grows past that).
    init(expectedNames: Int) {
        var size = 64
        while size < expectedNames * 2, size < 1 << 24 { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: Slot(name: nil, length: 0, hash: 0, lookupClass: 0, steps: 0))
        mask = size - 1
    }

    deinit {
        slots.deallocate()
    }

    /// Where the name is, or the empty slot where it belongs (valid until the next insert).
    func slot(_ name: UnsafeRawBufferPointer, hash: UInt32, lookupClass: Int) -> Int {
        position(name, hash: hash, lookupClass: lookupClass)
    }

    /// The steps stored in `slot`, or nil when its name has not been walked yet.
    func steps(at slot: Int) -> Int? {
        let steps = slots[slot].steps
        return steps == 0 ? nil : Int(steps)
    }

    /// Records `steps` (at least 1) for a name in the empty `slot` `slot(…)` gave.
    func insert(at slot: Int, _ name: UnsafeRawBufferPointer, hash: UInt32, lookupClass: Int, steps: Int) {
        // Names are far shorter than 2 GiB and scopes far smaller: Int32 holds both.
        guard steps > 0, steps <= Int(Int32.max), name.count <= Int(Int32.max), slots[slot].steps == 0 else { return }
        count += 1
        slots[slot] = Slot(
            name: name.baseAddress, length: Int32(name.count), hash: hash, lookupClass: Int32(lookupClass),
            steps: Int32(steps))
        if count * 2 > slots.count { grow() }
    }

    /// The slot holding the name, or the empty slot where it belongs.
    private func position(_ name: UnsafeRawBufferPointer, hash: UInt32, lookupClass: Int) -> Int {
        var index = Self.start(hash: hash, lookupClass: lookupClass) & mask
        while true {
            let slot = slots[index]
            if slot.steps == 0 { return index }
            if slot.hash == hash, slot.lookupClass == Int32(lookupClass), Int(slot.length) == name.count,
                Self.sameBytes(slot.name, name)
            {
                return index
            }
            index = (index + 1) & mask
        }
    }

    private static func sameBytes(_ stored: UnsafeRawPointer?, _ name: UnsafeRawBufferPointer) -> Bool {
        guard name.count > 0, let stored, let bytes = name.baseAddress else { return true }
        return memcmp(stored, bytes, name.count) == 0
    }

    /// Fibonacci hashing spreads the GNU hash's low bits, which differ little between
    /// names that share a prefix.
    private static func start(hash: UInt32, lookupClass: Int) -> Int {
        let mixed = (UInt64(hash) | UInt64(truncatingIfNeeded: lookupClass) << 32) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> 32)
    }

    private func grow() {
        let old = slots
        slots = .allocate(capacity: old.count * 2)
        slots.initialize(repeating: Slot(name: nil, length: 0, hash: 0, lookupClass: 0, steps: 0))
        mask = slots.count - 1
        for slot in old where slot.steps != 0 {
            var index = Self.start(hash: slot.hash, lookupClass: Int(slot.lookupClass)) & mask
            while slots[index].steps != 0 { index = (index + 1) & mask }
            slots[index] = slot
        }
        old.deallocate()
    }
}
