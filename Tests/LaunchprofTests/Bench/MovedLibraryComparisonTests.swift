import Foundation
import Testing

@testable import LaunchprofAnalysis
@testable import LaunchprofCore
@testable import LaunchprofReport

/// Base and head built in two folders (a CI job's two checkouts): the app's own library is one
/// library at two paths, compared as such — not "removed" in one folder and "added" in the other.
@Suite("compare: a library built in another folder is the same library", .serialized)
struct MovedLibraryComparisonTests {
    static let librarySource = """
        #include <stdint.h>
        volatile uint64_t twin_state;
        __attribute__((constructor)) static void twin_init(void) {
            for (uint64_t i = 0; i < 20000; i++) twin_state = twin_state * 6364136223846793005ull + i;
        }
        int twin_value(void) { return (int)(twin_state & 1); }
        """
    static let programSource = """
        int twin_value(void);
        int main(void) { return twin_value() * 0; }
        """

    /// Two real builds of a program and its library (soname libtwin.so.1) in two folders, each
    /// run by `launchprof run`, compared: the library's `loader.init` is one quantity under the
    /// head's path, remembering the base's, and nothing is added or removed.
    @Test func twoBuildsInTwoFoldersCompareTheirOwnLibrary() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lp-moved-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var libraries: [String] = []
        var reports: [String] = []
        for side in ["base", "head"] {
            // Fixture builds land in the shared cache; each side is copied into its own temp folder.
            let library = try FixtureBuilder.build(
                [], output: "moved-\(side)/libtwin.so.1", flags: ["-shared", "-fPIC", "-Wl,-soname,libtwin.so.1"],
                sourcesText: Self.librarySource)
            let program = try FixtureBuilder.build(
                [], output: "moved-\(side)/twin-app", flags: [library, "-Wl,-rpath,$ORIGIN"], sourcesText: Self.programSource)
            let folder = directory.appendingPathComponent(side).appendingPathComponent("build")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for file in [library, program] {
                try FileManager.default.copyItem(atPath: file, toPath: folder.appendingPathComponent((file as NSString).lastPathComponent).path)
            }
            libraries.append(folder.appendingPathComponent("libtwin.so.1").path)
            let report = directory.appendingPathComponent("\(side).json").path
            let outcome = try LaunchprofCLI.run(["run", "-r", "3", "--json", report, folder.appendingPathComponent("twin-app").path])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            reports.append(report)
        }
        // Each report has the library's initializer, at its own folder's path.
        for (report, library) in zip(reports, libraries) {
            let keys = try ReportFiles.readReport(report).samples().map(\.key)
            #expect(keys.contains("phase:loader.init[\(library)]"), "\(keys)")
        }
        let outcome = try LaunchprofCLI.run(["compare", "--format", "json", reports[0], reports[1]])
        #expect([0, 2, 4, 5].contains(outcome.status), "\(outcome.stderr)")
        let comparison = try JSONDecoder().decode(SuiteComparison.self, from: Data(outcome.stdout.utf8))
        let changes = try #require(comparison.entries.first).changes
        #expect(!changes.contains { $0.key.contains("libtwin") && ($0.verdict == .added || $0.verdict == .removed) }, "\(changes.map(\.key))")
        let initializer = try #require(changes.first { $0.key == "phase:loader.init[\(libraries[1])]" })
        #expect(initializer.baseKey == "phase:loader.init[\(libraries[0])]")
        #expect(initializer.baseRuns == 3 && initializer.newRuns == 3)
        // The text names where the base had it.
        let text = try LaunchprofCLI.run(["compare", "--all-phases", reports[0], reports[1]])
        #expect(text.stdout.contains("(base: phase:loader.init[\(libraries[0])])"), "\(text.stdout)")
    }

    /// Matching is by soname where the files say it, else by file name, and only one to one: two
    /// candidates for one name are left as they are (added and removed), never guessed.
    @Test func onlyAnUnambiguousMatchMoves() {
        func report(_ objects: [String]) -> LaunchReport {
            var run = BenchSamples.run(0, frameNs: 2_000_000, workNs: 1_000_000)
            run.phases = objects.map { LaunchPhase(name: "loader.init", startNs: 0, durationNs: 10, object: $0) }
            return LaunchReport(target: BenchSamples.target, host: BenchSamples.host, mode: .init(runs: 1), runs: [run])
        }
        let base = report(["/a/libx.so.1", "/usr/lib/libc.so.6", "/a/liby.so.2.0"])
        let new = report(["/b/libx.so.1", "/usr/lib/libc.so.6", "/b/liby.so.2.1", "/b/other/libz.so"])
        let sonames = ["/a/liby.so.2.0": "liby.so.2", "/b/liby.so.2.1": "liby.so.2"]
        let moved = ReportComparison.movedObjects(base: base, new: new) { sonames[$0] }
        #expect(moved == ["/b/libx.so.1": "/a/libx.so.1", "/b/liby.so.2.1": "/a/liby.so.2.0"])
        let ambiguous = report(["/b/libx.so.1", "/c/libx.so.1"])
        #expect(ReportComparison.movedObjects(base: base, new: ambiguous).isEmpty)
    }
}
