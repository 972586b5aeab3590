import Foundation
import LaunchprofELF
import LaunchprofReport
import Testing

@testable import LaunchprofCore
@testable import LaunchprofTracing

@Suite("Learned layout", .serialized)
struct LearnedLayoutTests {
    /// The tracer learns where libc's first DT_INIT_ARRAY entry points from the relocated array
    /// in the child; that offset must be what the file itself says the slot will hold (libc
    /// packs its relative relocations with DT_RELR, whose addend is the word in the file).
    @Test func learnedOffsetEqualsTheFilesRelocatedSlot() throws {
        let session = try runSession("/bin/true", [], runs: 2)
        let libc = try #require(session.closurePaths.first { $0.hasSuffix("/libc.so.6") })
        let learned = try #require(session.learned.initializerOffset(for: libc))
        #expect(learned == (try firstInitArrayWord(libc)))
    }

    /// Later launches write their breakpoints with text words the first launch read from the
    /// child, without reading them again: each must be exactly what the object's file holds at
    /// that address (text is mapped from the file, never relocated), for the loader's breakpoint
    /// armed at the exec stop and for every breakpoint of the arming recipe.
    @Test func learnedTextWordsAreTheFilesBytes() throws {
        let app = try RunFixtures.app(libraries: ["alpha", "beta"])
        let session = try runSession(app, [], runs: 3)
        // Only the first launch walks the chain (at relocation start, and again once the
        // arrays are relocated); the others arm from the recipe, whose prediction held.
        #expect((1...2).contains(session.learned.chainWalks))

        let loader = try #require(session.closurePaths.first { $0.contains("/ld-linux") })
        let relocate = try #require(ImagePlanner.debugSymbol(
            "_dl_relocate_object", of: try ELFImage.read(path: loader), in: ImagePlanner.defaultDebugDirectories))
        let execWords = try #require(session.learned.execStopWords(for: session.imagePath))
        #expect(execWords == [try fileWord(loader, at: relocate)])

        let recipe = try #require(session.learned.recipe(for: session.imagePath))
        var objects: [String] = []
        for target in recipe.targets {
            let path: String
            switch target.action {
            case .boundary(.objectInit(let name)): path = try #require(LinkMap.realPath(name))
            case .boundary(.programInit), .boundary(.main), .boundary(.entry): path = session.imagePath
            default: continue
            }
            objects.append(path)
            #expect(target.word == (try fileWord(path, at: target.offset)), "\(target.action)")
        }
        #expect(objects.contains { $0.hasSuffix("/libalpha.so") } && objects.contains { $0.hasSuffix("/libbeta.so") })
        #expect(recipe.targets.contains { $0.action == .boundary(.main) })
    }

    /// The recipe's prediction (link-map nodes at fixed offsets from ld.so) holds for a real
    /// program's small closure too: after the first launch, none walks. (In a large closure, such
    /// as gdb's 58 objects, a mapping can land in another gap from one launch to the next; the
    /// tracer then walks, and the accuracy tests check gdb's initializers in the loader's order.)
    @Test(arguments: ["/usr/bin/git"])
    func recipeHoldsForRealPrograms(_ program: String) throws {
        let session = try runSession(program, ["--version"], runs: 4)
        #expect((1...2).contains(session.learned.chainWalks))
        #expect(session.learned.recipe(for: session.imagePath) != nil)
    }

    /// A session of `runs` launches, run to the end; its `learned` holds what they taught.
    private func runSession(_ program: String, _ arguments: [String], runs: Int) throws -> RunSession {
        var configuration = RunConfiguration(program: program, arguments: arguments)
        configuration.runs = runs
        configuration.inheritedEnvironment = ProcessInfo.processInfo.environment
        configuration.observer = .ptrace  // what is learned is the breakpoint observer's
        let session = try RunSession(configuration: configuration)
        _ = try LaunchPipeline(session, sinks: [StreamingReportSink(output: InMemoryReportOutput())]).run()[0].get()
        return session
    }

    /// The 8-byte word the file holds at DT_INIT_ARRAY's first slot, found through readelf's
    /// dynamic section and program headers.
    private func firstInitArrayWord(_ path: String) throws -> UInt64 {
        let dynamic = try readelf(["-dW", path])
        let line = try #require(dynamic.split(separator: "\n").first { $0.contains("(INIT_ARRAY)") })
        let slot = try #require(UInt64(line.split(separator: " ").last!.dropFirst(2), radix: 16))
        return try fileWord(path, at: slot)
    }

    /// The 8 bytes the file holds at virtual address `slot`, found through readelf's program headers.
    private func fileWord(_ path: String, at slot: UInt64) throws -> UInt64 {
        for header in try readelf(["-lW", path]).split(separator: "\n") where header.contains("LOAD") {
            let fields = header.split(separator: " ")
            guard let offset = UInt64(fields[1].dropFirst(2), radix: 16),
                let vaddr = UInt64(fields[2].dropFirst(2), radix: 16),
                let size = UInt64(fields[4].dropFirst(2), radix: 16),
                slot >= vaddr, slot < vaddr + size
            else { continue }
            let handle = try #require(FileHandle(forReadingAtPath: path))
            defer { handle.closeFile() }
            handle.seek(toFileOffset: slot - vaddr + offset)
            let bytes = handle.readData(ofLength: 8)
            return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        }
        Issue.record("no PT_LOAD holds 0x\(String(slot, radix: 16))")
        return 0
    }

    private func readelf(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }
}
