import Foundation
import LaunchprofELF
import Testing

/// launchprof's reading of real system programs against the loader and binutils.
@Suite("ELF: system programs")
struct SystemProgramTests {
    static let resolver = DependencyResolver.system()

    static func closure(_ path: String, environment: [String: String] = [:]) throws -> Closure {
        let image = try ELFImage.read(path: path)
        return resolver.resolve(program: image, environment: environment)
    }

    @Test("closure equals ldd's objects, in ldd's order", arguments: ["/usr/bin/gdb", "/bin/true", "/usr/bin/python3"])
    func closureMatchesLdd(_ program: String) throws {
        let closure = try Self.closure(program)
        let truth = try InspectTruth.ldd(program)
        let ours = closure.entries.dropFirst().map { $0.image.path }
        #expect(ours == truth.objects)
        #expect(closure.missing.isEmpty)
        if program == "/usr/bin/gdb" {
            // 57 libraries plus the loader, as the issue states for this machine.
            #expect(ours.count == 58)
        }
    }

    @Test("relative relocations (outside DT_RELR) sum to LD_DEBUG=statistics' count")
    func relativeRelocationsMatchLoader() throws {
        for (program, arguments) in [("/usr/bin/gdb", ["--version"]), ("/bin/true", [])] {
            let closure = try Self.closure(program)
            // glibc 2.36 sums DT_RELACOUNT over relocated objects; DT_RELR entries are not counted.
            let ours = closure.objects.reduce(0) { $0 + $1.relocations.relative - $1.relocations.relativeFromRELR }
            let truth = try InspectTruth.relativeRelocationStatistic(program, arguments)
            #expect(ours == truth, "\(program)")
            if program == "/usr/bin/gdb" { #expect(ours == 111_294) }
        }
    }

    @Test("DT_RELR-encoded addresses equal readelf's offset counts")
    func relrMatchesReadelf() throws {
        let closure = try Self.closure("/usr/bin/gdb")
        var sawRELR = false
        for image in closure.objects {
            let truth = try InspectTruth.readelfRELROffsets(image.path)
            #expect(image.relocations.relativeFromRELR == truth, "\(image.path)")
            sawRELR = sawRELR || truth > 0
        }
        #expect(sawRELR, "Debian 12's libc.so.6 uses DT_RELR; the check needs at least one such object")
    }

    @Test("relocation counts by type equal readelf -r's listing")
    func relocationTypesMatchReadelf() throws {
        let closure = try Self.closure("/usr/bin/gdb")
        let names = ["gdb", "libc.so.6", "libpython3.11.so.1.0", "libstdc++.so.6", "ld-linux-x86-64.so.2"]
        for image in closure.objects where names.contains(where: { image.openedPath.hasSuffix("/" + $0) }) {
            let listing = try InspectTruth.run("/usr/bin/readelf", ["-r", "-W", image.path]).stdout
            var byType: [String: Int] = [:]
            for line in listing.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.count >= 3, fields[2].hasPrefix("R_X86_64_") { byType[String(fields[2]), default: 0] += 1 }
            }
            let counts = image.relocations
            #expect(counts.relative - counts.relativeFromRELR == byType["R_X86_64_RELATIVE", default: 0], "\(image.path)")
            #expect(counts.symbolic == byType["R_X86_64_GLOB_DAT", default: 0] + byType["R_X86_64_64", default: 0])
            #expect(counts.jumpSlot == byType["R_X86_64_JUMP_SLOT", default: 0], "\(image.path)")
            #expect(counts.irelative == byType["R_X86_64_IRELATIVE", default: 0], "\(image.path)")
            #expect(counts.copy == byType["R_X86_64_COPY", default: 0])
            let tls = ["R_X86_64_DTPMOD64", "R_X86_64_DTPOFF64", "R_X86_64_TPOFF64", "R_X86_64_TLSDESC"]
            #expect(counts.tls == tls.reduce(0) { $0 + byType[$1, default: 0] }, "\(image.path)")
        }
    }

    @Test("build-ids equal readelf -n")
    func buildIDsMatchReadelf() throws {
        let closure = try Self.closure("/usr/bin/gdb")
        for image in closure.objects {
            let truth = try InspectTruth.readelfBuildID(image.path)
            #expect(truth != nil)
            #expect(image.buildID == truth, "\(image.path)")
        }
    }

    @Test("initializer order equals the loader's 'calling init' order")
    func initializerOrderMatchesLoader() throws {
        let closure = try Self.closure("/usr/bin/gdb")
        let order = closure.initializerOrder()
        #expect(order.last == 0)
        let ours = order.dropLast().map { closure.entries[$0].image.path }
        let truth = try InspectTruth.initCalls("/usr/bin/gdb", ["--version"])
        #expect(ours == truth)
    }

    @Test("symbols the tracer needs equal nm's values")
    func tracerSymbols() throws {
        let closure = try Self.closure("/bin/true")
        let loader = try #require(closure.objects.first { $0.dynamic.soname == "ld-linux-x86-64.so.2" })
        let libc = try #require(closure.objects.first { $0.dynamic.soname == "libc.so.6" })
        let loaderTruth = try InspectTruth.nm(loader.path, dynamic: true)
        let libcTruth = try InspectTruth.nm(libc.path, dynamic: true)
        for name in ["_r_debug", "_dl_debug_state"] {
            #expect(loader.symbolAddress(name) != nil)
            #expect(loader.symbolAddress(name) == loaderTruth[name], "\(name)")
        }
        #expect(libc.symbolAddress("__libc_start_main") == libcTruth["__libc_start_main"])
        #expect(libc.symbolAddress("no_such_symbol_anywhere") == nil)
        #expect(loader.kind == .sharedObject)
        #expect(closure.objects[0].kind == .pie)
    }

    @Test("dynamic facts equal readelf -d")
    func dynamicFactsMatchReadelf() throws {
        for image in try Self.closure("/usr/bin/gdb").objects {
            let output = try InspectTruth.run("/usr/bin/readelf", ["-d", "-W", image.path]).stdout
            let needed = output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
                line.split(separator: "[").last.map { String($0.dropLast()) }
            }
            #expect(image.dynamic.needed == needed, "\(image.path)")
            #expect(image.dynamic.hasGNUHash == output.contains("(GNU_HASH)"))
            #expect((image.dynamic.initAddress != nil) == output.contains("(INIT)"))
            let bindNow = output.contains("(BIND_NOW)") || output.contains("Flags: NOW") || output.contains("BIND_NOW")
            #expect(image.dynamic.bindNow == bindNow, "\(image.path)")
        }
    }
}
