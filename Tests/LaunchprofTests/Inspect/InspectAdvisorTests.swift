import Foundation
import LaunchprofAnalysis
import LaunchprofReport
import LaunchprofRenderers
import Testing

/// Advice and rendering from plain report values.
@Suite("Inspect: advice and rendering")
struct InspectAdvisorTests {
    static func object(
        _ name: String, via: String = "cache", relative: Int = 0, relr: Int = 0, jumpSlot: Int = 0,
        binding: String = "lazy", hash: [String] = ["gnu"], initializers: Int = 0
    ) -> InspectReport.Object {
        InspectReport.Object(
            path: "/lib/\(name)", loadedAs: "/lib/\(name)", foundVia: via, type: "shared-object", soname: name,
            buildID: nil, sizeBytes: 4096, needed: [], neededBy: [], rpath: nil, runpath: nil, binding: binding,
            hashStyles: hash, tlsSizeBytes: 0,
            relocations: .init(relative: relative, relativeRELR: relr, jumpSlot: jumpSlot),
            initializers: .init(initFunction: 0, initArray: initializers, preinitArray: 0),
            finalizers: .init(finiFunction: 0, finiArray: 0), symbols: .init(imported: 1, exported: 2))
    }

    let model = LaunchCostModel(
        perLaunchPs: 0, perObjectPs: 7_000_000, perSegmentPs: 0, perRelativeRelocationPs: 3_000, perLookupPs: 90_000,
        perScopeStepPs: 0, perPageTouchedPs: 0, perVersionCheckPs: 0, perSymbolTablePagePs: 0, perInitializerPs: 500_000,
        source: "test")

    @Test("quiet for a small, well-linked closure")
    func noAdvice() {
        let objects = [Self.object("prog", via: "program"), Self.object("libc.so.6", relative: 999, jumpSlot: 10)]
        #expect(InspectAdvisor(costModel: model).advice(for: objects).isEmpty)
    }

    @Test("each kind names its objects and counts and prices them with the model")
    func everyKind() throws {
        var objects = [Self.object("prog", via: "program", relative: 5_000, initializers: 4)]
        for index in 0..<21 { objects.append(Self.object("lib\(index).so")) }
        objects.append(Self.object("libpacked.so", relative: 9_000, relr: 9_000))
        objects.append(Self.object("libold.so", hash: ["sysv"]))
        objects.append(Self.object("libnow.so", jumpSlot: 600, binding: "now", initializers: 7))
        let advice = InspectAdvisor(costModel: model).advice(for: objects)
        // Largest estimated saving first.
        #expect(advice.map(\.kind) == ["many-objects", "bind-now", "no-relr", "many-initializers", "no-gnu-hash"])

        let many = try #require(advice.first { $0.kind == "many-objects" })
        #expect(many.count == 24)
        #expect(many.costPerUnitNs == 7_000)
        #expect(many.estimatedNs == 24 * 7_000)
        #expect(many.message.hasPrefix("24 shared objects"))

        let relr = try #require(advice.first { $0.kind == "no-relr" })
        #expect(relr.objects == ["/lib/prog"])  // libpacked.so already uses DT_RELR
        #expect(relr.count == 5_000)
        #expect(relr.estimatedNs == 15_000)
        #expect(relr.message.contains("prog 5000"))

        #expect(advice.first { $0.kind == "no-gnu-hash" }?.objects == ["/lib/libold.so"])
        let now = try #require(advice.first { $0.kind == "bind-now" })
        #expect(now.count == 600)
        #expect(now.estimatedNs == 54_000)
        let initializers = try #require(advice.first { $0.kind == "many-initializers" })
        #expect(initializers.count == 11)
        #expect(initializers.objects == ["/lib/libnow.so", "/lib/prog"])
    }

    @Test("text rendering lists every object, the missing ones and the advice")
    func text() throws {
        let objects = [Self.object("prog", via: "program", relative: 5_000), Self.object("liba.so", relr: 0)]
        let report = InspectReport(
            script: nil,
            program: .init(
                path: "/lib/prog", type: "pie", elfClass: "ELF64", machine: "x86-64",
                interpreter: "/lib64/ld-linux-x86-64.so.2", buildID: "abcd", stripped: true, binding: "lazy",
                hashStyles: ["gnu"], tlsSizeBytes: 0, usesLoader: true),
            objects: objects, missing: [.init(name: "libgone.so", neededBy: ["/lib/prog"], reason: "not found")],
            initializerOrder: [],
            totals: .init(
                objects: 2, missing: 1, sizeBytes: 8192, relocations: objects[0].relocations, initializers: 0,
                finalizers: 0, importedSymbols: 2, exportedSymbols: 4, estimatedLoaderNs: 22_000),
            advice: InspectAdvisor(costModel: model).advice(for: objects), costModel: model)
        let text = InspectTextRenderer().render(report)
        #expect(text.contains("/lib/liba.so"))
        #expect(text.contains("libgone.so: not found, needed by /lib/prog"))
        #expect(text.contains("5000 relative relocations in 1 objects without DT_RELR"))
        #expect(text.contains("~22 µs estimated"))
        // The JSON keeps the contract's names and sorted keys.
        let json = String(decoding: try report.jsonBytes(), as: UTF8.self)
        #expect(json.contains("\"schemaVersion\" : 2"))
        #expect(json.contains("\"jumpSlot\""))
        #expect(json.range(of: "\"advice\"")!.lowerBound < json.range(of: "\"totals\"")!.lowerBound)
    }
}
