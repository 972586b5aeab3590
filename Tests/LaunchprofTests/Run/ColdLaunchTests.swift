import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--cold` evicts the profiled program's closure, not the machine's page cache (issue 33: as
/// root it dropped every cached page before every run), and says what it could not evict.
@Suite("run --cold: this program's files only")
struct ColdLaunchTests {
    /// Bytes of `path` in the page cache (mincore over a mapping of it).
    private static func residentBytes(_ path: String) -> Int {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size > 0,
            let mapping = mmap(nil, Int(status.st_size), PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED
        else { return -1 }
        defer { munmap(mapping, Int(status.st_size)) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (Int(status.st_size) + page - 1) / page)
        guard mincore(mapping, Int(status.st_size), &vector) == 0 else { return -1 }
        return min(vector.reduce(0) { $0 + Int($1 & 1) } * page, Int(status.st_size))
    }

    @Test("another file's cached pages stay resident through a --cold session; the program's own are evicted; what stayed is said")
    func coldLeavesOtherFilesCached() throws {
        var template = Array("/tmp/lp-cold-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = directory + "/other.bin"
        let size = 4 << 20
        try Data(repeating: 0x5a, count: size).write(to: URL(fileURLWithPath: other))
        _ = try Data(contentsOf: URL(fileURLWithPath: other))
        #expect(Self.residentBytes(other) == size, "the other file is cached before the session")
        let program = directory + "/prog"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/bin/true").resolvingSymlinksInPath().path, toPath: program)
        let report = directory + "/r.json"
        let outcome = try LaunchprofCLI.run(["run", "--cold", "-r", "3", "--observer", "ptrace", "--json", report, program])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(Self.residentBytes(other) == size, "--cold left the other file's \(size) bytes cached: \(Self.residentBytes(other)) are")
        // The program's own file is evicted before each run: the closure was not all resident.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        let runs = try #require(json?["runs"] as? [[String: Any]])
        for run in runs {
            let before = try #require(run["residentBeforeBytes"] as? Int)
            let closure = try #require(run["closureBytes"] as? Int)
            #expect(before < closure, "some of the closure was evicted: \(before) of \(closure) bytes stayed")
        }
        // libc and the loader are mapped by every process: they stay, and launchprof says so once.
        #expect(outcome.stderr.components(separatedBy: "stayed in the page cache").count == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("libc.so.6"), "\(outcome.stderr)")
    }
}
