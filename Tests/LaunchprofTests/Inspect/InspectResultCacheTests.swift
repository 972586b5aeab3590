import Foundation
import Testing

@testable import LaunchprofCore

/// `inspect`'s result cache: a repeated inspection is served from it, and anything that would
/// change the answer (a rebuilt library, a library dropped into an earlier search directory, a
/// damaged entry) gets a fresh reading. The truth for every answer is `inspect --no-cache`.
@Suite("Inspect: result cache", .serialized)
struct InspectResultCacheTests {
    /// A program linked to one library of `functions` exported functions, in a fresh directory.
    struct Program {
        let directory: String
        let program: String
        let library: String
        var cache: String { directory + "/cache" }
        var entries: [String] {
            let folder = cache + "/launchprof/inspect"
            return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.contains(".tmp-") }
                .map { folder + "/" + $0 }
        }

        init(_ name: String, functions: Int, runpath: [String] = []) throws {
            directory = FixtureBuilder.outputRoot.appendingPathComponent("inspect-cache/\(name)-\(getpid())").path
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory + "/lib", withIntermediateDirectories: true)
            library = directory + "/lib/libcachefixture.so"
            program = directory + "/program"
            try Self.buildLibrary(at: library, functions: functions)
            let source = directory + "/program.c"
            try "extern int exported0(void);\nint main(void) { return exported0(); }\n"
                .write(toFile: source, atomically: true, encoding: .utf8)
            let path = (runpath.map { directory + "/" + $0 } + [directory + "/lib"]).joined(separator: ":")
            try FixtureBuilder.run(
                "/usr/bin/cc",
                ["-o", program, source, "-L", directory + "/lib", "-lcachefixture", "-Wl,--enable-new-dtags,-rpath," + path])
        }

        static func buildLibrary(at path: String, functions: Int) throws {
            let source = path + ".c"
            let body = (0..<functions).map { "int exported\($0)(void) { return \($0); }\n" }.joined()
            try body.write(toFile: source, atomically: true, encoding: .utf8)
            // Built beside and renamed into place, as package managers and most builds replace files.
            try FixtureBuilder.run("/usr/bin/cc", ["-shared", "-fPIC", "-o", path + ".new", source])
            guard rename(path + ".new", path) == 0 else { throw InspectTruth.Failure(description: "rename \(path)") }
        }

        /// `inspect --json` with this program's private cache directory.
        func inspect(_ extra: [String] = []) throws -> InspectTruth.Output {
            try InspectCommandTests.inspect(["--json"] + extra + [program], environment: ["XDG_CACHE_HOME": cache])
        }
    }

    /// A file's status-change time is taken from a clock that ticks: launchprof keeps no result
    /// built from a file changed within `settleNs` of the inspection, so tests that want an entry
    /// wait until twice that has passed since the newest change (a wait for a moment on the
    /// clock, not for a process).
    static func waitUntilSettled(_ paths: [String]) {
        let newest = paths.compactMap { FileState.current($0) }.map(\.changedNs).max() ?? 0
        let until = newest + 2 * InspectResultCache.settleNs
        var moment = timespec(tv_sec: Int(until / 1_000_000_000), tv_nsec: Int(until % 1_000_000_000))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &moment, nil) == EINTR {}
    }

    /// An empty directory of this test process's own.
    static func scratch(_ name: String) throws -> String {
        let directory = FixtureBuilder.outputRoot.appendingPathComponent("inspect-cache/\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The object of `report` loaded from a path ending in `suffix`.
    static func object(_ report: String, endingIn suffix: String) throws -> [String: Any] {
        let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
        let objects = json?["objects"] as? [[String: Any]] ?? []
        guard let object = objects.first(where: { ($0["loadedAs"] as? String)?.hasSuffix(suffix) == true }) else {
            throw InspectTruth.Failure(description: "no object loaded as *\(suffix) in the report")
        }
        return object
    }

    static func exported(_ object: [String: Any]) -> Int? {
        (object["symbols"] as? [String: Any])?["exported"] as? Int
    }

    @Test func aRepeatedInspectionIsServedFromTheCacheUntilTheLibraryIsRebuilt() throws {
        let fixture = try Program("rebuilt", functions: 3)
        Self.waitUntilSettled([fixture.program, fixture.library])
        let first = try fixture.inspect()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == (try fixture.inspect(["--no-cache"])).stdout)
        #expect(fixture.entries.count == 1)
        #expect(Self.exported(try Self.object(first.stdout, endingIn: "libcachefixture.so")) == 3)

        // Served from the entry: a mark put into its stored output comes back out.
        let entry = try #require(fixture.entries.first)
        let stored = try Data(contentsOf: URL(fileURLWithPath: entry))
        let marked = try #require(String(data: stored, encoding: .utf8)).replacingOccurrences(
            of: "\"exportedSymbols\"", with: "\"EXPORTEDSYMBOLS\"")
        #expect(marked.utf8.count == stored.count)
        try marked.write(toFile: entry, atomically: false, encoding: .utf8)
        #expect(try fixture.inspect().stdout.contains("EXPORTEDSYMBOLS"))
        #expect(!(try fixture.inspect(["--no-cache"]).stdout.contains("EXPORTEDSYMBOLS")))

        // The library rebuilt with one more function: read again, the answer is the new one.
        try Program.buildLibrary(at: fixture.library, functions: 4)
        let rebuilt = try fixture.inspect()
        #expect(!rebuilt.stdout.contains("EXPORTEDSYMBOLS"))
        #expect(Self.exported(try Self.object(rebuilt.stdout, endingIn: "libcachefixture.so")) == 4)
        #expect(rebuilt.stdout == (try fixture.inspect(["--no-cache"])).stdout)
    }

    @Test func aLibraryDroppedIntoAnEarlierSearchDirectoryIsFound() throws {
        let fixture = try Program("earlier", functions: 2, runpath: ["first"])
        try FileManager.default.createDirectory(atPath: fixture.directory + "/first", withIntermediateDirectories: true)
        Self.waitUntilSettled([fixture.program, fixture.library])
        let before = try fixture.inspect()
        #expect(before.status == 0, "\(before.stderr)")
        _ = try Self.object(before.stdout, endingIn: "/lib/libcachefixture.so")
        #expect(fixture.entries.count == 1)

        // The same name in the RUNPATH's first directory now wins, as it would for ld.so.
        try Program.buildLibrary(at: fixture.directory + "/first/libcachefixture.so", functions: 5)
        let after = try fixture.inspect()
        let object = try Self.object(after.stdout, endingIn: "/first/libcachefixture.so")
        #expect(Self.exported(object) == 5)
        #expect(after.stdout == (try fixture.inspect(["--no-cache"])).stdout)
    }

    @Test func aDamagedEntryIsReadAgainAndReplaced() throws {
        let fixture = try Program("damaged", functions: 1)
        Self.waitUntilSettled([fixture.program, fixture.library])
        let truth = try fixture.inspect(["--no-cache"])
        #expect(fixture.entries.isEmpty, "--no-cache keeps nothing")
        _ = try fixture.inspect()
        let entry = try #require(fixture.entries.first)
        let whole = try Data(contentsOf: URL(fileURLWithPath: entry))
        for damage in [Data("not an entry\n".utf8), whole.prefix(whole.count / 2)] {
            try damage.write(to: URL(fileURLWithPath: entry))
            let again = try fixture.inspect()
            #expect(again.stdout == truth.stdout)
            #expect(try Data(contentsOf: URL(fileURLWithPath: entry)) == whole, "the entry is written again whole")
        }
    }

    /// The cache layer on its own: a file changed within the settle time is not vouched for, and
    /// an entry stops being served when any consulted path changes, appears or disappears.
    @Test func anEntryHoldsOnlyWhileEveryConsultedPathIsUnchanged() throws {
        let directory = try Self.scratch("layer")
        let cache = InspectResultCache(directory: directory + "/entries")
        let file = directory + "/object"
        let absent = directory + "/not-yet"
        try Data("one".utf8).write(to: URL(fileURLWithPath: file))
        let result = InspectResultCache.Result(
            exitStatus: 3, standardOutput: Array("report\n".utf8), standardError: Array("missing\n".utf8))

        cache.store(result, key: "k", consulted: [file, absent], startedAtNs: InspectResultCache.realTimeNs())
        #expect(cache.lookup(key: "k") == nil, "written just now: not stored")

        let later = InspectResultCache.realTimeNs() + 2 * InspectResultCache.settleNs
        cache.store(result, key: "k", consulted: [file, absent], startedAtNs: later)
        #expect(cache.lookup(key: "k") == result)
        #expect(cache.lookup(key: "other") == nil)

        try Data("two".utf8).write(to: URL(fileURLWithPath: absent))
        #expect(cache.lookup(key: "k") == nil, "a path that was absent now exists")
        unlink(absent)
        #expect(cache.lookup(key: "k") == result)
        try Data("three".utf8).write(to: URL(fileURLWithPath: file))
        #expect(cache.lookup(key: "k") == nil, "the file changed")
    }

    /// The key holds what decides the output besides the consulted paths: the calibration file
    /// the cost model comes from (absent, written, rewritten) and the search variables.
    @Test func theKeyChangesWithTheCalibrationFileAndTheSearchVariables() throws {
        let directory = try Self.scratch("key")
        let model = directory + "/calibration.json"
        func key(_ environment: [String: String] = ["PATH": "/usr/bin"]) throws -> String {
            try #require(InspectResultCache.key(program: "gdb", json: true, environment: environment, modelFile: model))
        }
        let absent = try key()
        #expect(try key() == absent)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: model))
        let written = try key()
        #expect(written != absent)
        try Data("{ }".utf8).write(to: URL(fileURLWithPath: model))
        #expect(try key() != written)
        #expect(try key(["PATH": "/usr/bin", "LD_LIBRARY_PATH": "/opt"]) != (try key()))
        #expect(try key(["PATH": "/bin"]) != (try key()))
    }

    /// The cache holds at most `capacity` entries: storing one more drops the oldest written,
    /// and files that are not entries are left alone.
    @Test func theOldestEntriesGoBeyondTheCapacity() throws {
        let directory = try Self.scratch("prune")
        let cache = InspectResultCache(directory: directory + "/entries")
        let file = directory + "/object"
        try Data("one".utf8).write(to: URL(fileURLWithPath: file))
        let later = InspectResultCache.realTimeNs() + 2 * InspectResultCache.settleNs
        let result = InspectResultCache.Result(exitStatus: 0, standardOutput: Array("r\n".utf8), standardError: [])
        let keys = (0...InspectResultCache.capacity).map { "key \($0)" }
        for (index, key) in keys.enumerated() {
            cache.store(result, key: key, consulted: [file], startedAtNs: later)
            // Written in this order, whatever the clock's tick: the mtime orders the entries.
            var times = [timespec(tv_sec: 1_000_000 + index, tv_nsec: 0), timespec(tv_sec: 1_000_000 + index, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, cache.path(for: key), &times, 0) == 0)
        }
        try Data("not an entry".utf8).write(to: URL(fileURLWithPath: directory + "/entries/notes.txt"))
        cache.store(result, key: "one more", consulted: [file], startedAtNs: later)
        #expect(cache.lookup(key: keys[0]) == nil, "the oldest was dropped")
        #expect(cache.lookup(key: keys[1]) == nil, "and the next oldest, for the one more")
        for key in keys.dropFirst(2) + ["one more"] { #expect(cache.lookup(key: key) == result, "\(key)") }
        #expect(FileManager.default.fileExists(atPath: directory + "/entries/notes.txt"))
    }
}
