import CLaunchprof

/// For the loader-work walk (`LoaderWorkAnalyzer.walk`): per looked-up name, a bit per scope
/// member whose GNU hash chains hold a hash equal to the name's but in bit 0 (the bit a chain
/// uses to mark its end): the members that may define it. Once the walk has read all of a
/// member's hash table, it tests the member only against the names it is a candidate for.
///
/// A member is indexed when the walk first steps over it, once, by whichever of the walk's
/// threads gets there first (`index(_:at:)`); bits are set and read atomically, and a member's
/// bits are published before `index` says it is indexed.
final class CandidateIndex: @unchecked Sendable {
    private let names: LookupNameTable
    /// 64-bit words per name (scope positions 0..<64 in the first, and so on).
    let words: Int
    private let masks: UnsafeMutablePointer<UInt64>
    /// Per member: 0 not indexed, 1 being indexed, 2 indexed.
    private let states: UnsafeMutablePointer<UInt8>
    /// One bit per value of a key's bits 1...18: set when some name has such a key. Most exports
    /// are no looked-up name's; this 32 KiB filter rejects them from L1 cache, before a probe of
    /// the name table.
    private let keyFilter: [UInt64]

    init(names: LookupNameTable, memberCount: Int) {
        self.names = names
        words = max((memberCount + 63) / 64, 1)
        masks = .allocate(capacity: max(names.count, 1) * words)
        masks.initialize(repeating: 0, count: max(names.count, 1) * words)
        states = .allocate(capacity: max(memberCount, 1))
        states.initialize(repeating: 0, count: max(memberCount, 1))
        var filter = [UInt64](repeating: 0, count: (Self.filterMask + 1) / 64)
        for number in 0..<names.count {
            let bit = Self.filterBit(names.hash(number) | 1)
            filter[bit >> 6] |= 1 << UInt64(bit & 63)
        }
        keyFilter = filter
    }

    deinit {
        masks.deallocate()
        states.deallocate()
    }

    /// Word `word` of `name`'s candidate mask.
    @inline(__always)
    func mask(_ name: Int, word: Int) -> UInt64 {
        lp_mask_get(masks, name &* words &+ word)
    }

    /// Indexes `member` (at scope `position`) unless the other thread is already doing so;
    /// returns whether it is indexed now.
    func index(_ member: ScopeMember, at position: Int) -> Bool {
        if lp_index_ready(states, position) { return true }
        guard lp_index_claim(states, position) else { return false }
        let word = position / 64
        let bit = UInt64(1) << UInt64(position % 64)
        keyFilter.withUnsafeBufferPointer { filter in
            member.forEachExportHash { chainHash in
                let key = chainHash | 1
                let filterBit = Self.filterBit(key)
                guard filter[filterBit >> 6] & 1 << UInt64(filterBit & 63) != 0 else { return }
                names.forEachName(withKey: key) { number in
                    lp_mask_add(masks, number &* words &+ word, bit)
                }
            }
        }
        lp_index_publish(states, position)
        return true
    }

    private static func filterBit(_ key: UInt32) -> Int { Int(key >> 1) & filterMask }
    private static let filterMask = (1 << 18) - 1
}
