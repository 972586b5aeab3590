import Foundation
import LaunchprofELF
import Testing

@testable import LaunchprofTracing

@Suite("Image planner")
struct ImagePlannerTests {
    /// The loader's `_dl_relocate_object` comes from its detached debug file; its address must be
    /// what readelf prints for that file's .symtab.
    @Test func loaderRelocationSymbolComesFromTheDebugFile() throws {
        let program = try ELFImage.read(path: "/bin/true")
        let closure = DependencyResolver.system().resolve(program: program, environment: [:])
        let loader = try #require(closure.objects.first { $0.path.contains("ld-linux") })
        let buildID = try #require(loader.buildID)
        let debugPath = "/usr/lib/debug/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug"
        try #require(FileManager.default.fileExists(atPath: debugPath), "libc6-dbg is not installed")
        let expected = try readelfSymbol("_dl_relocate_object", in: debugPath)
        let debug = try ELFImage.read(path: debugPath)
        #expect(debug.symbolAddress("_dl_relocate_object") == expected)
        let plan = ImagePlanner.plan(program: program, closure: closure)
        #expect(plan.loader?.relocateObject == expected)
        #expect(plan.loader?.debugState == loader.symbolAddress("_dl_debug_state"))
    }

    private func readelfSymbol(_ name: String, in path: String) throws -> UInt64 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = ["-sW", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let line = try #require(text.split(separator: "\n").first { $0.hasSuffix(" \(name)") })
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        return try #require(UInt64(fields[1], radix: 16))
    }
}
