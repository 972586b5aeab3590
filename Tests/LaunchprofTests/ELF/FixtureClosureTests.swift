import Foundation
import LaunchprofELF
import Testing

/// Dependency resolution on fixtures built from C, each compared with what the loader itself
/// does (`ldd` runs the loader in trace mode).
@Suite("ELF: fixture closures")
struct FixtureClosureTests {
    let resolver = DependencyResolver.system()

    func resolve(_ program: String, environment: [String: String] = [:]) throws -> Closure {
        resolver.resolve(program: try ELFImage.read(path: program), environment: environment)
    }

    func expectMatchesLoader(_ closure: Closure, _ program: String, environment: [String: String] = [:]) throws {
        let truth = try InspectTruth.ldd(program, environment: environment)
        #expect(closure.entries.dropFirst().map(\.image.path) == truth.objects)
        #expect(closure.missing.map(\.name).sorted() == truth.missing.sorted())
    }

    func source(_ closure: Closure, _ fileName: String) -> Closure.Source? {
        closure.entries.first { $0.image.path.hasSuffix("/" + fileName) }?.source
    }

    @Test("DT_RPATH with $ORIGIN is inherited by the libraries the program loads")
    func rpathIsInherited() throws {
        let program = try ELFFixtures.chain("rpath", programFlags: ["-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib"])
        let closure = try resolve(program)
        try expectMatchesLoader(closure, program)
        #expect(closure.missing.isEmpty)
        #expect(closure.entries[0].image.dynamic.rpath == "$ORIGIN/../lib")
        #expect(closure.entries[0].image.dynamic.runpath == nil)
        #expect(source(closure, "libelfdep.so") == .rpath)
        #expect(source(closure, "libelfleaf.so") == .rpath)
    }

    @Test("DT_RUNPATH is not inherited: the leaf library is missing, as the loader says")
    func runpathIsNotInherited() throws {
        let program = try ELFFixtures.chain("runpath", programFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"])
        let closure = try resolve(program)
        try expectMatchesLoader(closure, program)
        #expect(closure.entries[0].image.dynamic.runpath == "$ORIGIN/../lib")
        #expect(source(closure, "libelfdep.so") == .runpath)
        let missing = try #require(closure.missing.first)
        #expect(missing.name == "libelfleaf.so")
        #expect(missing.neededBy == [ELFFixtures.root("runpath") + "/lib/libelfdep.so"])
    }

    @Test("a library's own DT_RUNPATH resolves its dependencies")
    func ownRunpath() throws {
        let program = try ELFFixtures.chain(
            "runpath-own", programFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"],
            depFlags: ["-Wl,--enable-new-dtags,-rpath,$ORIGIN"])
        let closure = try resolve(program)
        try expectMatchesLoader(closure, program)
        #expect(closure.missing.isEmpty)
        #expect(source(closure, "libelfleaf.so") == .runpath)
    }

    @Test("LD_LIBRARY_PATH is searched")
    func libraryPath() throws {
        let program = try ELFFixtures.chain("library-path", programFlags: [])
        let environment = ["LD_LIBRARY_PATH": ELFFixtures.root("library-path") + "/lib"]
        let closure = try resolve(program, environment: environment)
        try expectMatchesLoader(closure, program, environment: environment)
        #expect(closure.missing.isEmpty)
        #expect(source(closure, "libelfdep.so") == .libraryPath)
        // Without it nothing is found, and the rest is still resolved.
        let bare = try resolve(program)
        try expectMatchesLoader(bare, program)
        #expect(bare.missing.map(\.name) == ["libelfdep.so"])
    }

    @Test("$LIB and $PLATFORM expand as the loader expands them")
    func libAndPlatformTokens() throws {
        let host = HostCapabilities.current()
        let layout = "tokens"
        try ELFFixtures.leaf(layout, directory: host.libDirectory)
        try ELFFixtures.dep(layout, directory: host.platform, leafDirectory: host.libDirectory)
        let program = try ELFFixtures.program(
            layout, depDirectory: host.platform, leafDirectory: host.libDirectory,
            flags: ["-Wl,--disable-new-dtags,-rpath,$ORIGIN/../$PLATFORM:${ORIGIN}/../$LIB"])
        let closure = try resolve(program)
        try expectMatchesLoader(closure, program)
        #expect(closure.missing.isEmpty)
    }

    @Test("a library found nowhere is reported with the object that needs it")
    func missingLibrary() throws {
        try FixtureBuilder.build(
            ["elf-leaf.c"], output: "elf/missing/build/libelfgone.so",
            flags: ["-shared", "-fPIC", "-Wl,-soname,libelfgone.so"])
        let program = try FixtureBuilder.build(
            ["elf-leaf.c"], output: "elf/missing/bin/prog", flags: [], sourcesText: "int main(void){return 0;}\n")
        let linked = try FixtureBuilder.build(
            [], output: "elf/missing/bin/needs-gone",
            flags: ["-L", ELFFixtures.root("missing") + "/build", "-lelfgone", "-Wl,--no-as-needed"],
            sourcesText: "int elf_leaf_value(void);\nint main(void){return elf_leaf_value();}\n")
        _ = program
        let closure = try resolve(linked)
        try expectMatchesLoader(closure, linked)
        #expect(closure.missing.map(\.name) == ["libelfgone.so"])
        #expect(closure.missing.first?.neededBy == [linked])
        // The rest (libc, the loader) is still resolved.
        #expect(closure.entries.count >= 3)
    }

    @Test("DT_RELR tables are expanded and counted like readelf, and the loader agrees on the rest")
    func relr() throws {
        let layout = "relr"
        try FixtureBuilder.build(
            [], output: "elf/\(layout)/lib/libelfdep.so",
            flags: ["-shared", "-fPIC", "-Wl,-soname,libelfdep.so", "-Wl,-z,pack-relative-relocs"],
            sourcesText: ELFFixtures.pointerTableSource(500))
        let program = try ELFFixtures.program(layout, flags: ["-Wl,-rpath,$ORIGIN/../lib"])
        let closure = try resolve(program)
        try expectMatchesLoader(closure, program)
        let library = try #require(closure.objects.first { $0.path.hasSuffix("/libelfdep.so") })
        #expect(library.relocations.relativeFromRELR >= 500)
        #expect(library.relocations.relativeFromRELR == (try InspectTruth.readelfRELROffsets(library.path)))
        #expect(library.dynamic.hasRELR)
        #expect(library.firstRelocationTarget == (try firstRELRAddress(library.path)))
        let outsideRELR = closure.objects.reduce(0) { $0 + $1.relocations.relative - $1.relocations.relativeFromRELR }
        #expect(outsideRELR == (try InspectTruth.relativeRelocationStatistic(program)))
    }

    /// The first address `readelf -r` lists in a .relr.dyn section.
    func firstRELRAddress(_ path: String) throws -> UInt64? {
        let lines = try InspectTruth.run("/usr/bin/readelf", ["-r", "-W", path]).stdout.split(separator: "\n")
        guard let header = lines.firstIndex(where: { $0.contains(".relr.dyn") }) else { return nil }
        for line in lines[(header + 1)...] {
            let text = line.trimmingCharacters(in: .whitespaces)
            if let value = UInt64(text.split(separator: " ").first ?? "", radix: 16), text.count >= 16 {
                return value
            }
        }
        return nil
    }

    @Test("many initializers are counted and ordered as the loader runs them")
    func manyInitializers() throws {
        let layout = "initializers"
        let library = try FixtureBuilder.build(
            [], output: "elf/\(layout)/lib/libelfinit.so", flags: ["-shared", "-fPIC", "-Wl,-soname,libelfinit.so"],
            sourcesText: ELFFixtures.constructorsSource(40))
        let program = try FixtureBuilder.build(
            ["elf-initializers-main.c"], output: "elf/\(layout)/bin/prog",
            flags: ["-L", ELFFixtures.root(layout) + "/lib", "-lelfinit", "-Wl,-rpath,$ORIGIN/../lib"])
        // The constructors really run: the program checks their count itself.
        #expect(try InspectTruth.run(program, []).status == 0)
        let closure = try resolve(program)
        try expectMatchesLoader(closure, program)
        let image = try #require(closure.objects.first { $0.path == library })
        let sections = try InspectTruth.run("/usr/bin/readelf", ["-S", "-W", library]).stdout
        let initArrayLine = try #require(sections.split(separator: "\n").first { $0.contains(".init_array") })
        let fields = initArrayLine.split(separator: "]").last?.split(separator: " ") ?? []
        let size = Int(fields[4], radix: 16) ?? -1
        #expect(image.dynamic.initArray?.count == size / 8)
        #expect((image.dynamic.initArray?.count ?? 0) >= 40)
        let order = closure.initializerOrder().dropLast().map { closure.entries[$0].image.path }
        #expect(order == (try InspectTruth.initCalls(program)))
    }

    @Test("main's address in an unstripped program equals nm")
    func mainSymbol() throws {
        let program = try ELFFixtures.chain("rpath", programFlags: ["-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib"])
        let image = try ELFImage.read(path: program)
        #expect(!image.isStripped)
        let truth = try InspectTruth.nm(program, dynamic: false)
        #expect(image.symbolAddress("main") == truth["main"])
        #expect(image.symbolAddress("main") != nil)
        #expect(image.kind == .pie)
    }

    /// A stripped program has no `main` symbol; its entry code still passes `main` to libc.
    /// Built twice from one source, once stripped (`-s` removes only non-loaded sections, so
    /// addresses stay), the stripped copy's decoded `main` must equal `nm`'s on the other.
    @Test("main from a stripped program's entry code equals nm's main", arguments: [
        ("pie", ["-pie", "-fPIE"]), ("no-pie", ["-no-pie", "-fno-PIE"]),
        ("static", ["-static"]), ("static-pie", ["-static-pie"]),
    ])
    func mainFromEntryCode(_ name: String, _ flags: [String]) throws {
        let symbols = try FixtureBuilder.build(["elf-static.c"], output: "elf/entry/\(name)", flags: flags)
        let stripped = try FixtureBuilder.build(["elf-static.c"], output: "elf/entry/\(name)-stripped", flags: flags + ["-s"])
        let truth = try #require(try InspectTruth.nm(symbols, dynamic: false)["main"])
        let image = try ELFImage.read(path: stripped)
        #expect(image.isStripped)
        #expect(image.symbolAddress("main") == nil)
        #expect(image.mainFromEntryCode == truth)
    }

    @Test("entry code of another shape gives no main")
    func entryCodeOfAnotherShape() throws {
        // A shared library's entry is 0 or not glibc's _start; a Go program starts in its runtime.
        let library = try ELFImage.read(path: try RunFixtures.library("entrycheck", directory: "elf/entry"))
        #expect(library.mainFromEntryCode == nil)
        let go = try ELFImage.read(path: try GoFixture.build())
        #expect(go.mainFromEntryCode == nil)
    }

    @Test("static and static-PIE programs have no loader work")
    func staticPrograms() throws {
        let plain = try FixtureBuilder.build(["elf-static.c"], output: "elf/static/static", flags: ["-static"])
        let pie = try FixtureBuilder.build(["elf-static.c"], output: "elf/static/static-pie", flags: ["-static-pie"])
        for (path, kind) in [(plain, ELFKind.staticExecutable), (pie, .staticPIE)] {
            let image = try ELFImage.read(path: path)
            #expect(image.kind == kind)
            #expect(image.interpreter == nil)
            #expect(!image.kind.usesLoader)
            let closure = resolver.resolve(program: image, environment: [:])
            #expect(closure.entries.count == 1)
            #expect(closure.missing.isEmpty)
        }
    }

    @Test("a static Go program is static, with no loader work")
    func staticGoProgram() throws {
        let binary = try GoFixture.build()
        let image = try ELFImage.read(path: binary)
        #expect(image.kind == .staticExecutable)
        #expect(image.interpreter == nil)
        #expect(!image.isDynamic)
        #expect(resolver.resolve(program: image, environment: [:]).entries.count == 1)
    }
}

/// Builds `elf-hello.go` with the Debian golang-go toolchain (an apt dependency of the tests).
enum GoFixture {
    static func build() throws -> String {
        let output = ELFFixtures.root("go") + "/hello-gomaxprocs"
        if FileManager.default.isExecutableFile(atPath: output) { return output }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/go") else {
            throw InspectTruth.Failure(description: "/usr/bin/go is missing: install golang-go (apt) to build the static Go fixture")
        }
        try FileManager.default.createDirectory(atPath: ELFFixtures.root("go"), withIntermediateDirectories: true)
        let source = FixtureBuilder.sourceDirectory.appendingPathComponent("elf-hello.go").path
        let cache = ELFFixtures.root("go") + "/cache"
        let result = try InspectTruth.run(
            "/usr/bin/go", ["build", "-o", output, source],
            environment: ["CGO_ENABLED": "0", "GOCACHE": cache, "GOPATH": cache + "/path", "HOME": cache, "GO111MODULE": "off"])
        guard result.status == 0 else {
            throw InspectTruth.Failure(description: "go build failed: \(result.stderr)")
        }
        return output
    }
}
