import LaunchprofELF
import LaunchprofAnalysis
import LaunchprofReport

/// Turns a resolved closure into an `InspectReport`: per-object facts, totals, advice.
struct InspectReportBuilder {
    let costModel: LaunchCostModel

    /// `work`: the closure's `LoaderWorkAnalyzer` counts, one per entry.
    func report(closure: Closure, work: [LoaderWork], script: InspectReport.Script?) -> InspectReport {
        let entries = closure.entries
        let objects = zip(entries, work).map { entry, work in object(entry, work: work, in: entries) }
        let programImage = entries[0].image
        let program = InspectReport.Program(
            path: programImage.path, type: programImage.kind.rawValue, elfClass: programImage.elfClass,
            machine: programImage.machine, interpreter: programImage.interpreter, buildID: programImage.buildID,
            stripped: programImage.isStripped, binding: binding(programImage), hashStyles: hashStyles(programImage),
            tlsSizeBytes: programImage.tlsSize, usesLoader: programImage.kind.usesLoader)

        let relocations = objects.reduce(InspectReport.Relocations()) { $0 + $1.relocations }
        let initializers = objects.reduce(0) { $0 + $1.initializers.total }
        let totalWork = work.reduce(LoaderWork(), +)
        let estimate = program.usesLoader ? costModel.estimateNs(totalWork) : 0
        let totals = InspectReport.Totals(
            objects: objects.count, missing: closure.missing.count,
            sizeBytes: objects.reduce(0) { $0 + $1.sizeBytes }, relocations: relocations,
            initializers: initializers, finalizers: objects.reduce(0) { $0 + $1.finalizers.total },
            importedSymbols: objects.reduce(0) { $0 + $1.symbols.imported },
            exportedSymbols: objects.reduce(0) { $0 + $1.symbols.exported }, estimatedLoaderNs: estimate,
            loaderWork: totalWork)
        let order = closure.initializerOrder().filter { entries[$0].image.initializerCount > 0 }
            .map { entries[$0].image.path }
        let advice = program.usesLoader ? InspectAdvisor(costModel: costModel).advice(for: objects) : []
        return InspectReport(
            script: script, program: program, objects: objects,
            missing: closure.missing.map { .init(name: $0.name, neededBy: $0.neededBy, reason: $0.reason) },
            initializerOrder: order, totals: totals, advice: advice, costModel: costModel)
    }

    private func object(_ entry: Closure.Entry, work: LoaderWork, in entries: [Closure.Entry]) -> InspectReport.Object {
        let image = entry.image
        let counts = image.relocations
        let dynamic = image.dynamic
        return InspectReport.Object(
            path: image.path, loadedAs: entry.loadedAs, foundVia: entry.source.rawValue, type: image.kind.rawValue,
            soname: dynamic.soname, buildID: image.buildID, sizeBytes: image.fileSize, needed: dynamic.needed,
            neededBy: entry.neededBy.map { entries[$0].image.path }, rpath: dynamic.rpath, runpath: dynamic.runpath,
            binding: binding(image), hashStyles: hashStyles(image), tlsSizeBytes: image.tlsSize,
            relocations: .init(
                relative: counts.relative, relativeRELR: counts.relativeFromRELR, symbolic: counts.symbolic,
                jumpSlot: counts.jumpSlot, tls: counts.tls, copy: counts.copy, irelative: counts.irelative,
                other: counts.other),
            initializers: .init(
                initFunction: dynamic.initAddress == nil ? 0 : 1, initArray: dynamic.initArray?.count ?? 0,
                preinitArray: dynamic.preinitArray?.count ?? 0),
            finalizers: .init(finiFunction: dynamic.finiAddress == nil ? 0 : 1, finiArray: dynamic.finiArray?.count ?? 0),
            symbols: .init(imported: image.importedSymbolCount, exported: image.exportedSymbolCount), loaderWork: work)
    }

    private func binding(_ image: ELFImage) -> String {
        guard image.isDynamic else { return "none" }
        return image.dynamic.bindNow ? "now" : "lazy"
    }

    private func hashStyles(_ image: ELFImage) -> [String] {
        (image.dynamic.hasGNUHash ? ["gnu"] : []) + (image.dynamic.hasSysVHash ? ["sysv"] : [])
    }
}
