#if canImport(Glibc)
import Glibc
#endif

/// The breakpoints a launch armed when relocation started, each written as an offset from the
/// load bias of the link-map node it was computed from, so later launches of the same program
/// arm them after one read of just those nodes: no walk of the chain, no names, no lookups.
///
/// This holds because the loader allocates its nodes itself, in the same order and sizes in
/// every launch of the same closure and environment, and Linux places a process's mappings at
/// fixed distances from each other: only the whole region moves (ASLR). So each node lies at
/// the same offset from the loader's load address in every launch. The prediction is checked:
/// every node read must hold the same object — its dynamic section at the same place in its file
/// (`l_ld − l_addr`) and its name where the loader put it before (`l_name`, allocated in the same
/// sequence) — else the tracer walks the chain as in a first launch.
struct ArmingRecipe: Sendable {
    struct Node: Sendable {
        /// The node's address minus the loader's load bias.
        var offset: UInt64
        var dynamicOffset: UInt64
        /// `l_name` minus the loader's load bias.
        var nameOffset: UInt64
    }

    struct Target: Sendable {
        /// Index into `nodes` (into the walked chain while the recipe is being built).
        var node: Int
        var offset: UInt64
        var action: BreakpointTable.Action
        /// The text word the breakpoint covers, as the launch that made the recipe found it.
        var word: UInt64? = nil
    }

    /// The nodes the targets need; the first is always the program's.
    private(set) var nodes: [Node] = []
    private(set) var targets: [Target] = []

    /// Keeps the nodes of `objects` (a walked chain) that `targets` refer to, and the program's;
    /// `targets` carry the words their breakpoints covered in this launch.
    init(objects: [LinkMap.Object], targets: [Target], loaderBias: UInt64) {
        var slots: [Int: Int] = [:]
        for index in [0] + targets.map(\.node) where slots[index] == nil {
            slots[index] = nodes.count
            let object = objects[index]
            nodes.append(Node(
                offset: object.address &- loaderBias, dynamicOffset: object.dynamicOffset,
                nameOffset: object.nameAddress &- loaderBias))
        }
        self.targets = targets.map {
            Target(node: slots[$0.node]!, offset: $0.offset, action: $0.action, word: $0.word)
        }
    }

    /// This launch's load bias of each node, read in one system call; nil when a node does not
    /// hold the object it held before.
    func biases(_ pid: pid_t, loaderBias: UInt64) -> [UInt64]? {
        let words: [UInt64]
        do {
            words = try Ptrace.readBlocks(pid, at: nodes.map { loaderBias &+ $0.offset }, words: LinkMap.nodeWords)
        } catch {
            return nil
        }
        var biases: [UInt64] = []
        biases.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() {
            let bias = words[index * LinkMap.nodeWords]
            let name = words[index * LinkMap.nodeWords + 1]
            let dynamic = words[index * LinkMap.nodeWords + 2]
            guard dynamic &- bias == node.dynamicOffset, name &- loaderBias == node.nameOffset else { return nil }
            biases.append(bias)
        }
        return biases
    }
}
