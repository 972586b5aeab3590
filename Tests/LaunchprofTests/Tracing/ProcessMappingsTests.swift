import Foundation
import LaunchprofSampling
import Testing

/// `/proc/PID/maps`, read by one parser: plain text first, then this process's own file.
@Suite("Process mappings")
struct ProcessMappingsTests {
    static let text = """
        55d4c0a00000-55d4c0a02000 r--p 00000000 fe:01 1048602                    /usr/bin/true
        55d4c0a02000-55d4c0a06000 r-xp 00002000 fe:01 1048602                    /usr/bin/true
        7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 
        7f1c2a200000-7f1c2a226000 r-xp 00028000 fe:01 1050001                    /tmp/My App/lib one.so
        7f1c2a300000-7f1c2a301000 r-xp 00001000 fe:01 1050002                    /tmp/gone.so (deleted)
        7f1c2a400000-7f1c2a402000 r-xp 00000000 00:00 0                          [vdso]
        7ffd1e000000-7ffd1e021000 rw-p 00000000 00:00 0                          [stack]
        not a mapping
        zz-10 r-xp 00000000 00:00 0 /bad/range

        """

    @Test("every well-formed line; names with spaces, (deleted), anonymous and [vdso] as written")
    func parse() {
        let lines = ProcessMappings.parse(Array(Self.text.utf8))
        #expect(lines.map(\.name) == [
            "/usr/bin/true", "/usr/bin/true", "", "/tmp/My App/lib one.so", "/tmp/gone.so (deleted)", "[vdso]", "[stack]",
        ])
        #expect(lines[1] == .init(start: 0x55d4_c0a0_2000, end: 0x55d4_c0a0_6000, offset: 0x2000, permissions: "r-xp", name: "/usr/bin/true"))
        #expect(lines[3].offset == 0x28000 && lines[3].isExecutable && lines[3].isFile)
        #expect(!lines[2].isFile && !lines[2].isExecutable)
        #expect(!lines[5].isFile && lines[5].isExecutable)
    }

    @Test("the live file: this process's own executable and its vDSO")
    func live() throws {
        let lines = ProcessMappings.lines(getpid())
        let executable = try #require(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        #expect(lines.contains { $0.name == executable && $0.isExecutable })
        #expect(lines.contains { $0.name == "[vdso]" })
        #expect(ProcessMappings.files(getpid()).allSatisfy { $0.path.hasPrefix("/") })
        #expect(ProcessMappings.lines(-1).isEmpty)
    }
}
