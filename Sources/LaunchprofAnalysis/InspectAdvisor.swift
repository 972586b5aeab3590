import LaunchprofReport

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

    /// Symbol lookups over the closure worth mentioning.
    public var manyLookupsThreshold = 1_000

    /// Advice for `objects` (load order, program first), the largest estimated saving first
    /// (ties in a fixed order of kinds).
    public func advice(for objects: [InspectReport.Object]) -> [InspectReport.Advice] {
        var advice: [InspectReport.Advice] = []
        let shared = objects.indices.filter { objects[$0].foundVia != "program" }
        if shared.count > manyObjectsThreshold {
            let mapped = shared.filter { objects[$0].loaderWork.mappedObjects > 0 }
            let cost = mapped.reduce(0) { $0 + mappingNs(objects[$1].loaderWork) }
            let each = mapped.isEmpty ? costModel.perObjectPs / 1_000 : cost / mapped.count
            advice.append(
                .init(
                    kind: "many-objects",
                    message: "\(shared.count) shared objects are mapped before main, about "
                        + "\(microseconds(each)) each to open, map and check (lookups aside): merge small libraries or link some statically.",
                    objects: shared.map { objects[$0].path }, count: shared.count, costPerUnitNs: each,
                    estimatedNs: mapped.isEmpty ? shared.count * each : cost))
        }
        if let lookups = lookupAdvice(objects) { advice.append(lookups) }
        if let swift = swiftRuntimeAdvice(objects) { advice.append(swift) }

        let unpacked = ranked(objects, where: {
            $0.relocations.relativeRELR == 0 && $0.relocations.relative >= relativeWithoutRELRThreshold
        }) { $0.relocations.relative }
        if !unpacked.isEmpty {
            let count = unpacked.reduce(0) { $0 + objects[$1].relocations.relative }
            advice.append(
                .init(
                    kind: "no-relr",
                    message: "\(count) relative relocations in \(unpacked.count) objects without DT_RELR ("
                        + names(objects, unpacked) { "\($0.relocations.relative)" }
                        + "): relink with -Wl,-z,pack-relative-relocs (glibc 2.36+) to shrink the tables the loader reads "
                        + "(the estimate is all their work: packing saves the table reads, the stores and page faults remain).",
                    objects: unpacked.map { objects[$0].path }, count: count,
                    costPerUnitNs: costModel.perRelativeRelocationPs / 1_000,
                    estimatedNs: LaunchCostModel.ns(count, costModel.perRelativeRelocationPs)))
        }

        let sysvOnly = objects.indices.filter { objects[$0].hashStyles == ["sysv"] }
        if !sysvOnly.isEmpty {
            advice.append(
                .init(
                    kind: "no-gnu-hash",
                    message: "\(sysvOnly.count) objects have only a SysV hash table ("
                        + names(objects, sysvOnly) { "\($0.symbols.exported) exports" }
                        + "): link with -Wl,--hash-style=gnu for faster symbol lookups.",
                    objects: sysvOnly.map { objects[$0].path }, count: sysvOnly.count, costPerUnitNs: 0))
        }

        let boundNow = ranked(objects, where: { $0.binding == "now" && $0.relocations.jumpSlot > 0 }) {
            $0.relocations.jumpSlot
        }
        let slots = boundNow.reduce(0) { $0 + objects[$1].relocations.jumpSlot }
        if slots >= bindNowJumpSlotThreshold {
            // Each slot is a lookup as deep as the object's lookups are on average.
            let cost = boundNow.reduce(0) { total, index in
                let object = objects[index]
                let work = object.loaderWork
                let steps = work.lookups == 0 ? 1 : Double(work.scopeSteps) / Double(work.lookups)
                return total + LaunchCostModel.ns(object.relocations.jumpSlot, costModel.perLookupPs)
                    + Int(Double(object.relocations.jumpSlot) * steps * Double(costModel.perScopeStepPs) / 1_000)
            }
            advice.append(
                .init(
                    kind: "bind-now",
                    message: "\(slots) PLT slots are bound at start-up because of BIND_NOW (-z now) ("
                        + names(objects, boundNow) { "\($0.relocations.jumpSlot)" }
                        + "): lazy binding (-z lazy) defers each lookup to its first call, at the price of a writable GOT (no full RELRO).",
                    objects: boundNow.map { objects[$0].path }, count: slots, costPerUnitNs: slots == 0 ? 0 : cost / slots,
                    estimatedNs: cost))
        }

        let initializing = ranked(objects, where: { $0.initializers.total > 0 }) { $0.initializers.total }
        let initializers = initializing.reduce(0) { $0 + objects[$1].initializers.total }
        if initializers >= manyInitializersThreshold {
            advice.append(
                .init(
                    kind: "many-initializers",
                    message: "\(initializers) initializers run before main ("
                        + names(objects, initializing) { "\($0.initializers.total)" }
                        + "): each also runs its own code; defer work until it is needed.",
                    objects: initializing.map { objects[$0].path }, count: initializers,
                    costPerUnitNs: costModel.perInitializerPs / 1_000,
                    estimatedNs: LaunchCostModel.ns(initializers, costModel.perInitializerPs)))
        }
        let order = ["many-objects", "symbol-lookups", "swift-runtime", "no-relr", "no-gnu-hash", "bind-now", "many-initializers"]
        return advice.enumerated().sorted { lhs, rhs in
            if lhs.element.estimatedNs != rhs.element.estimatedNs { return lhs.element.estimatedNs > rhs.element.estimatedNs }
            return (order.firstIndex(of: lhs.element.kind) ?? 0, lhs.offset) < (order.firstIndex(of: rhs.element.kind) ?? 0, rhs.offset)
        }.map(\.element)
    }

    /// The positions of the `objects` that `include` takes, by `key`, largest first, ties in
    /// their given order. Positions, not objects: filtering or sorting these large values copies
    /// and retains each of their strings and arrays (a third of a millisecond of inspect on gdb's
    /// 59 objects).
    private func ranked(
        _ objects: [InspectReport.Object], where include: (InspectReport.Object) -> Bool,
        by key: (InspectReport.Object) -> Int
    ) -> [Int] {
        objects.indices.filter { include(objects[$0]) }.map { (key: key(objects[$0]), position: $0) }
            .sorted { $0.key != $1.key ? $0.key > $1.key : $0.position < $1.position }
            .map(\.position)
    }

    /// An object's cost of being opened, mapped and version-checked, in ns.
    private func mappingNs(_ work: LoaderWork) -> Int {
        LaunchCostModel.ns(work.mappedObjects, costModel.perObjectPs) + LaunchCostModel.ns(work.segments, costModel.perSegmentPs)
            + LaunchCostModel.ns(work.versionChecks, costModel.perVersionCheckPs)
    }

    /// The cost of the symbol lookups an object makes (their fixed part, their names' bytes and
    /// their walk through the scope) and of the pages of its own tables lookups read, in ns.
    private func lookupNs(_ work: LoaderWork) -> Int {
        LaunchCostModel.ns(work.lookups, costModel.perLookupPs) + LaunchCostModel.ns(work.scopeSteps, costModel.perScopeStepPs)
            + LaunchCostModel.ns(work.symbolTablePages, costModel.perSymbolTablePagePs)
            + LaunchCostModel.ns(work.symbolTableFaults, costModel.perSymbolTableFaultPs)
            + LaunchCostModel.ns(work.lookupNameBytes, costModel.perLookupNameBytePs)
            + LaunchCostModel.ns(work.largeTableLookups, costModel.perLargeTableLookupPs)
    }

    /// Symbol lookups: imported symbols × scope depth, and the link options that shorten them.
    private func lookupAdvice(_ objects: [InspectReport.Object]) -> InspectReport.Advice? {
        let lookups = objects.reduce(0) { $0 + $1.loaderWork.lookups }
        guard lookups >= manyLookupsThreshold else { return nil }
        let steps = objects.reduce(0) { $0 + $1.loaderWork.scopeSteps }
        let heaviest = ranked(objects, where: { $0.loaderWork.lookups > 0 }) { lookupNs($0.loaderWork) }
        let cost = heaviest.reduce(0) { $0 + lookupNs(objects[$1].loaderWork) }
        let depth = Double(steps) / Double(lookups)
        return .init(
            kind: "symbol-lookups",
            message: "\(lookups) symbol lookups search \(oneDecimal(depth)) objects each on average ("
                + names(objects, heaviest) { "\($0.loaderWork.lookups) × \(oneDecimal($0.loaderWork.meanScopeDepth))" }
                + "): link libraries with -Wl,-Bsymbolic-functions (or -Bsymbolic) so their references to their own "
                + "definitions bind without a lookup, build with -fvisibility=hidden so internal symbols are not exported, "
                + "and fewer libraries shorten every walk. Prelinking is deprecated in glibc 2.36 (gone in 2.37) and direct binding does not exist on glibc.",
            objects: heaviest.map { objects[$0].path }, count: lookups, costPerUnitNs: cost / lookups, estimatedNs: cost)
    }

    /// The Swift runtime and Foundation as shared libraries: `-static-stdlib` links them into
    /// the program (whose own references then bind at link time).
    private func swiftRuntimeAdvice(_ objects: [InspectReport.Object]) -> InspectReport.Advice? {
        guard objects.contains(where: { fileName($0.path).hasPrefix("libswiftCore.so") }) else { return nil }
        let prefixes = ["libswift", "libFoundation", "lib_Foundation", "libdispatch.so", "libBlocksRuntime.so"]
        let runtime = objects.indices.filter { index in
            let name = fileName(objects[index].path)
            return prefixes.contains { name.hasPrefix($0) }
        }
        let cost = runtime.reduce(0) { $0 + costModel.objectShareNs(objects[$1].loaderWork) }
        let lookups = runtime.reduce(0) { $0 + objects[$1].loaderWork.lookups }
        return .init(
            kind: "swift-runtime",
            message: "\(runtime.count) objects are the Swift runtime and its libraries ("
                + names(objects, runtime) { "\($0.loaderWork.lookups) lookups" }
                + ", \(lookups) lookups in all): build with -static-stdlib (swift build --static-swift-stdlib) to link them "
                + "into the program, which removes their mapping and binds most of their references at link time.",
            objects: runtime.map { objects[$0].path }, count: runtime.count, costPerUnitNs: runtime.isEmpty ? 0 : cost / runtime.count,
            estimatedNs: cost)
    }

    private func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// "a (n), b (m) and 3 more", naming the objects at `positions` by file name.
    private func names(
        _ objects: [InspectReport.Object], _ positions: [Int], _ detail: (InspectReport.Object) -> String
    ) -> String {
        // Concatenated here: the standard library's `joined` is generic code whose first call
        // looks up a conformance among the binary's ~4,700 (on every `inspect`).
        var text = ""
        for position in positions.prefix(namesInMessage) {
            if !text.isEmpty { text += ", " }
            text += "\(fileName(objects[position].path)) \(detail(objects[position]))"
        }
        let rest = positions.count - min(positions.count, namesInMessage)
        return text + (rest > 0 ? " and \(rest) more" : "")
    }

    /// The part after the last slash (the whole path without one, or when it ends in one).
    private func fileName(_ path: String) -> Substring {
        guard let slash = path.lastIndex(of: "/"), path.index(after: slash) != path.endIndex else { return path[...] }
        return path[path.index(after: slash)...]
    }

    private func microseconds(_ ns: Int) -> String {
        DurationText.wholeMicroseconds(ns, from: 1_000)
    }
}
