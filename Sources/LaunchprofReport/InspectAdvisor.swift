/// Turns the numbers of an inspected closure into advice, each item naming the objects and
/// counts that triggered it and pricing them with a `LaunchCostModel`.
public struct InspectAdvisor: Sendable {
    /// More shared objects than this: suggest merging or static linking.
    public var manyObjectsThreshold = 20
    /// An object with at least this many relative relocations and no DT_RELR: suggest packing.
    public var relativeWithoutRELRThreshold = 1_000
    /// Jump slots bound at start-up, over the closure, worth mentioning.
    public var bindNowJumpSlotThreshold = 500
    /// Initializers over the closure worth mentioning.
    public var manyInitializersThreshold = 10
    /// How many objects a message names before "and N more".
    public var namesInMessage = 3

    public let costModel: LaunchCostModel

    public init(costModel: LaunchCostModel) {
        self.costModel = costModel
    }

    /// Advice for `objects` (load order, program first), in a fixed order of kinds.
    public func advice(for objects: [InspectReport.Object]) -> [InspectReport.Advice] {
        var advice: [InspectReport.Advice] = []
        let shared = objects.filter { $0.foundVia != "program" }
        if shared.count > manyObjectsThreshold {
            advice.append(
                .init(
                    kind: "many-objects",
                    message: "\(shared.count) shared objects are mapped before main, about "
                        + "\(microseconds(costModel.perObjectNs)) each: merge small libraries or link some statically.",
                    objects: shared.map(\.path), count: shared.count, costPerUnitNs: costModel.perObjectNs))
        }

        let unpacked = objects.filter {
            $0.relocations.relativeRELR == 0 && $0.relocations.relative >= relativeWithoutRELRThreshold
        }.sorted { $0.relocations.relative > $1.relocations.relative }
        if !unpacked.isEmpty {
            let count = unpacked.reduce(0) { $0 + $1.relocations.relative }
            advice.append(
                .init(
                    kind: "no-relr",
                    message: "\(count) relative relocations in \(unpacked.count) objects without DT_RELR ("
                        + names(unpacked) { "\($0.relocations.relative)" }
                        + "): relink with -Wl,-z,pack-relative-relocs (glibc 2.36+) to shrink the tables the loader reads.",
                    objects: unpacked.map(\.path), count: count, costPerUnitNs: costModel.perRelativeRelocationNs))
        }

        let sysvOnly = objects.filter { $0.hashStyles == ["sysv"] }
        if !sysvOnly.isEmpty {
            let lookups = sysvOnly.reduce(0) { $0 + $1.symbols.exported }
            advice.append(
                .init(
                    kind: "no-gnu-hash",
                    message: "\(sysvOnly.count) objects have only a SysV hash table (" + names(sysvOnly) { "\($0.symbols.exported) exports" }
                        + "): link with -Wl,--hash-style=gnu for faster symbol lookups.",
                    objects: sysvOnly.map(\.path), count: sysvOnly.count, costPerUnitNs: 0))
        }

        let boundNow = objects.filter { $0.binding == "now" && $0.relocations.jumpSlot > 0 }
            .sorted { $0.relocations.jumpSlot > $1.relocations.jumpSlot }
        let slots = boundNow.reduce(0) { $0 + $1.relocations.jumpSlot }
        if slots >= bindNowJumpSlotThreshold {
            advice.append(
                .init(
                    kind: "bind-now",
                    message: "\(slots) PLT slots are bound at start-up because of BIND_NOW (" + names(boundNow) { "\($0.relocations.jumpSlot)" }
                        + "): lazy binding defers each to its first call, at the price of RELRO for the GOT.",
                    objects: boundNow.map(\.path), count: slots, costPerUnitNs: costModel.perJumpSlotNs))
        }

        let initializing = objects.filter { $0.initializers.total > 0 }
            .sorted { $0.initializers.total > $1.initializers.total }
        let initializers = initializing.reduce(0) { $0 + $1.initializers.total }
        if initializers >= manyInitializersThreshold {
            advice.append(
                .init(
                    kind: "many-initializers",
                    message: "\(initializers) initializers run before main (" + names(initializing) { "\($0.initializers.total)" }
                        + "): each also runs its own code; defer work until it is needed.",
                    objects: initializing.map(\.path), count: initializers, costPerUnitNs: costModel.perInitializerNs))
        }
        return advice
    }

    /// "a (n), b (m) and 3 more", naming objects by file name.
    private func names(_ objects: [InspectReport.Object], _ detail: (InspectReport.Object) -> String) -> String {
        let named = objects.prefix(namesInMessage).map { "\(fileName($0.path)) \(detail($0))" }
        let rest = objects.count - named.count
        return named.joined(separator: ", ") + (rest > 0 ? " and \(rest) more" : "")
    }

    private func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private func microseconds(_ ns: Int) -> String {
        ns >= 1_000 ? "\(ns / 1_000) µs" : "\(ns) ns"
    }
}
