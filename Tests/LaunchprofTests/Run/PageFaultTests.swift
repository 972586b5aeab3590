import Foundation
@testable import LaunchprofCore
import LaunchprofReport
import Testing

/// Each run's page faults are the kernel's count for the child, read as launchprof reaps it:
/// the fixture reports its own count (getrusage) as the last thing it does, and the two must be
/// equal. A launch that read pages from disk (major faults) is not a warm launch and says so.
@Suite("Run: page faults")
struct PageFaultTests {
    /// Writes `path` out and drops it from the page cache (as `calibrate` drops its programs);
    /// true when none of it stayed resident (a file system that keeps files in memory, such as
    /// tmpfs, cannot drop them).
    static func dropFromPageCache(_ path: String) -> Bool {
        ProgramGenerator.dropFromPageCache(path) && PageCache.residency(path).residentBytes == 0
    }

    /// The fixture's `faults` truth lines, as (major, minor) pairs.
    static func ownCounts(_ truthPath: String) throws -> [(major: UInt64, minor: UInt64)] {
        try FixtureTruth(contentsOf: truthPath).all("faults").map { entry in
            let numbers = entry.name.split(separator: "-").compactMap { UInt64($0) }
            try #require(numbers.count == 2, "\(entry)")
            return (numbers[0], numbers[1])
        }
    }

    /// `--cold` evicts the program before each run, so each reads its far page from disk: the
    /// major faults are expected there, counted, and not warned about.
    @Test("cold runs: major and minor faults equal the child's own count, every run read from disk")
    func coldRunsCountTheirMajorFaults() throws {
        let program = try RunFixtures.program("faults")
        let evictable = Self.dropFromPageCache(program)
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let outcome = try RunHarness.run(program, runs: 2, environment: ["LP_FIXTURE_TRUTH": truthPath]) {
            $0.cold = true
        }
        let own = try Self.ownCounts(truthPath)
        try #require(outcome.runs.count == 2 && own.count == 2, "\(own)")
        for (run, counted) in zip(outcome.runs, own) {
            #expect(run.majorFaults == counted.major, "run \(run.index): the child counted \(counted.major)")
            #expect(run.minorFaults == counted.minor, "run \(run.index): the child counted \(counted.minor)")
            #expect(!run.warnings.contains { $0.code == .pagesReadFromDisk }, "--cold promises reads from disk")
            // Where the file system can drop the file (not tmpfs), the page 2 MB in came from disk.
            if evictable { #expect(counted.major >= 1, "run \(run.index)") }
        }
        let summary = try #require(outcome.summary.pageFaults)
        #expect(summary.majorFaults == own.reduce(0) { $0 + $1.major })
        #expect(summary.runsReadingFromDisk == own.filter { $0.major > 0 }.count)
    }

    /// Warm runs: the same counts; a run that read pages from disk all the same says it was not
    /// warm.
    @Test("warm runs: faults equal the child's own count; a run that read from disk is flagged")
    func warmRunsFlagReadsFromDisk() throws {
        let program = try RunFixtures.program("faults")
        let truthPath = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truthPath) }
        let outcome = try RunHarness.run(program, runs: 3, environment: ["LP_FIXTURE_TRUTH": truthPath])
        let own = try Self.ownCounts(truthPath).suffix(3)  // after the warm-up run's line
        try #require(outcome.runs.count == 3 && own.count == 3, "\(own)")
        for (run, counted) in zip(outcome.runs, own) {
            #expect(run.majorFaults == counted.major, "run \(run.index): the child counted \(counted.major)")
            #expect(run.minorFaults == counted.minor, "run \(run.index): the child counted \(counted.minor)")
            #expect(run.warnings.contains { $0.code == .pagesReadFromDisk } == (counted.major > 0), "\(run.warnings)")
        }
        let summary = try #require(outcome.summary.pageFaults)
        #expect(summary.medianMinorFaults == own.map(\.minor).sorted()[1])
    }
}
