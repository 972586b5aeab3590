/// For the loader-work walk (`LoaderWorkAnalyzer.walk`): per looked-up name, the scope members
/// stepped over by the walk that may still define it, the members whose GNU hash chains hold a
/// hash equal to the name's but in bit 0 (the bit a chain uses to mark its end).
///
/// Members join one at a time, when the walk stops testing every name against them; a name is
/// then tested only against the joined members it has a candidate in.
struct CandidateIndex {
    private let hashes: [UInt32]
    /// One bit per value of a key's low 18 bits: set when some name has such a key. Most exports
    /// are no looked-up name's; this 32 KiB filter rejects them from L1 cache.
    private var keyFilter: [UInt64] = []
    /// Open addressing on `hash | 1`: the key in the high half, the number + 1 of the first name
    /// with that key in the low half (0: empty).
    private var keySlots: [UInt64] = []
    /// The next name with the same key (-1: none).
    private var sameKey: [Int32] = []
    /// Per name, its most recent candidate node (-1: none); nodes form lists through `next`.
    private var head: [Int32]
    private var nodePosition: [Int32] = []
    private var nodeNext: [Int32] = []

    init(hashes: [UInt32]) {
        self.hashes = hashes
        head = [Int32](repeating: -1, count: hashes.count)
    }

    /// Adds every name numbered above `name` that `member` (at scope `position`) may define.
    mutating func add(_ member: ScopeMember, at position: Int, after name: Int) {
        if keySlots.isEmpty { buildKeys() }
        let mask = keySlots.count - 1
        // Local copies (not mutated here): no exclusivity checks on `self` per export.
        let keyFilter = self.keyFilter
        let keySlots = self.keySlots
        let position = Int32(truncatingIfNeeded: position)
        member.forEachExportHash { chainHash in
            let key = chainHash | 1
            let bit = Int(key >> 1) & Self.filterMask
            guard keyFilter[bit >> 6] & 1 << UInt64(bit & 63) != 0 else { return }
            var slot = Self.start(key) & mask
            while keySlots[slot] != 0 {
                if UInt32(truncatingIfNeeded: keySlots[slot] >> 32) == key {
                    var number = Int(UInt32(truncatingIfNeeded: keySlots[slot])) - 1
                    while number >= 0 {
                        // A name can have several exports of its key here (symbol versions).
                        if number > name, head[number] < 0 || nodePosition[Int(head[number])] != position {
                            nodePosition.append(position)
                            nodeNext.append(head[number])
                            head[number] = Int32(truncatingIfNeeded: nodePosition.count - 1)
                        }
                        number = Int(sameKey[number])
                    }
                    return
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// The candidate positions of `name`, ascending, in `positions` (replacing its contents).
    func positions(of name: Int, into positions: inout [Int32]) {
        positions.removeAll(keepingCapacity: true)
        var node = head[name]
        while node >= 0 {
            positions.append(nodePosition[Int(node)])
            node = nodeNext[Int(node)]
        }
        // Members join in the order they fill up, not scope order; lists are a few entries.
        if positions.count > 1 { positions.sort() }
    }

    private mutating func buildKeys() {
        var size = 64
        while size * 3 < hashes.count * 4 { size <<= 1 }
        keySlots = [UInt64](repeating: 0, count: size)
        keyFilter = [UInt64](repeating: 0, count: (Self.filterMask + 1) / 64)
        sameKey = [Int32](repeating: -1, count: hashes.count)
        let mask = size - 1
        for number in hashes.indices {
            let key = hashes[number] | 1
            let bit = Int(key >> 1) & Self.filterMask
            keyFilter[bit >> 6] |= 1 << UInt64(bit & 63)
            var slot = Self.start(key) & mask
            while keySlots[slot] != 0, UInt32(truncatingIfNeeded: keySlots[slot] >> 32) != key {
                slot = (slot + 1) & mask
            }
            if keySlots[slot] == 0 {
                keySlots[slot] = UInt64(key) << 32 | UInt64(number + 1)
            } else {
                let first = Int(UInt32(truncatingIfNeeded: keySlots[slot])) - 1
                sameKey[number] = sameKey[first]
                sameKey[first] = Int32(truncatingIfNeeded: number)
            }
        }
    }

    private static let filterMask = (1 << 18) - 1

    private static func start(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 40)
    }
}
