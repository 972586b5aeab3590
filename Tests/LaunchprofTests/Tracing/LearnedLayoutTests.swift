import Foundation
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
        var configuration = RunConfiguration(program: "/bin/true", arguments: [])
        configuration.runs = 2
        configuration.inheritedEnvironment = ProcessInfo.processInfo.environment
        let session = try RunSession(configuration: configuration)
        let writer = try LaunchReportWriter(
            output: InMemoryReportOutput(), target: session.target,
            host: .init(kernel: "", cpu: "", cores: 1, libc: ""), mode: session.mode)
        _ = try session.run(into: writer)
        let libc = try #require(session.closurePaths.first { $0.hasSuffix("/libc.so.6") })
        let learned = try #require(session.learned.initializerOffset(for: libc))
        #expect(learned == (try firstInitArrayWord(libc)))
    }

    /// The 8-byte word the file holds at DT_INIT_ARRAY's first slot, found through readelf's
    /// dynamic section and program headers.
    private func firstInitArrayWord(_ path: String) throws -> UInt64 {
        let dynamic = try readelf(["-dW", path])
        let line = try #require(dynamic.split(separator: "\n").first { $0.contains("(INIT_ARRAY)") })
        let slot = try #require(UInt64(line.split(separator: " ").last!.dropFirst(2), radix: 16))
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
