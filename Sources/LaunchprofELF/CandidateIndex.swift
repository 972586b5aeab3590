/// For the loader-work walk (`LoaderWorkAnalyzer.walk`): per looked-up name, the scope members
/// stepped over by the walk that may still define it, the members whose GNU hash chains hold a
/// hash equal to the name's but in bit 0 (the bit a chain uses to mark its end).
///
/// Members join one at a time, when the walk stops testing every name against them; a name is
/// then tested only against the joined members it has a candidate in.
struct CandidateIndex {
    private let names: LookupNameTable
    /// One bit per value of a key's bits 1...18: set when some name has such a key. Most exports
    /// are no looked-up name's; this 32 KiB filter rejects them from L1 cache, before a probe of
    /// the name table.
    private var keyFilter: [UInt64] = []
    /// Per name, its most recent candidate node (-1: none); nodes form lists through `next`.
    private var head: [Int32]
    private var nodePosition: [Int32] = []
    private var nodeNext: [Int32] = []

    init(names: LookupNameTable) {
        self.names = names
        head = [Int32](repeating: -1, count: names.count)
        // Most names end up with one candidate (their definer): one allocation each.
        nodePosition.reserveCapacity(names.count)
        nodeNext.reserveCapacity(names.count)
    }

    /// Adds every name numbered above `name` that `member` (at scope `position`) may define.
    mutating func add(_ member: ScopeMember, at position: Int, after name: Int) {
        if keyFilter.isEmpty { buildFilter() }
        // A local copy (not mutated here): no exclusivity checks on `self` per export.
        let keyFilter = self.keyFilter
        let position = Int32(truncatingIfNeeded: position)
        member.forEachExportHash { chainHash in
            let key = chainHash | 1
            let bit = Int(key >> 1) & Self.filterMask
            guard keyFilter[bit >> 6] & 1 << UInt64(bit & 63) != 0 else { return }
            names.forEachName(withKey: key) { number in
                // A name can have several exports of its key here (symbol versions): one node.
                guard number > name, head[number] < 0 || nodePosition[Int(head[number])] != position else { return }
                nodePosition.append(position)
                nodeNext.append(head[number])
                head[number] = Int32(truncatingIfNeeded: nodePosition.count - 1)
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

    private mutating func buildFilter() {
        keyFilter = [UInt64](repeating: 0, count: (Self.filterMask + 1) / 64)
        for number in 0..<names.count {
            let hash = names.hash(number)
            let bit = Int((hash | 1) >> 1) & Self.filterMask
            keyFilter[bit >> 6] |= 1 << UInt64(bit & 63)
        }
    }

    private static let filterMask = (1 << 18) - 1
}
