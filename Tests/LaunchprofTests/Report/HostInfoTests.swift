import Foundation
import LaunchprofCore
import Testing

/// Host facts against the system's own tools.
@Suite("HostInfo")
struct HostInfoTests {
    func output(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("kernel, cores, libc and CPU agree with uname, nproc, getconf and /proc/cpuinfo")
    func matchesTools() throws {
        let host = HostInfo.current()
        #expect(host.kernel == (try output("/usr/bin/uname", ["-r"])))
        let online = Int(try output("/usr/bin/nproc", []))
        let all = Int(try output("/usr/bin/nproc", ["--all"]))
        // nproc honours the affinity mask; online CPUs lie between it and all CPUs.
        #expect(host.cores >= (online ?? 1) && host.cores <= (all ?? Int.max))
        #expect(host.libc == (try output("/usr/bin/getconf", ["GNU_LIBC_VERSION"])))
        let model = try output("/bin/sh", ["-c", "grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-"])
        #expect(host.cpu == model)
    }
}
