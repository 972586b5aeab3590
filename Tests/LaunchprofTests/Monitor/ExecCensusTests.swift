import Foundation
import LaunchprofELF
import LaunchprofMonitor
import Testing

/// `--all`'s census on scripted kernel events: what each unwatched exec's record measures, how it
/// ends, and that watched programs and long-running processes are not in it.
private let ms: UInt64 = 1_000_000

@Suite("Exec census (monitor --all)")
struct ExecCensusTests {
    func census(timeoutNs: UInt64 = 1_000 * ms, maximumProcesses: Int = 65_536) -> ExecCensus {
        ExecCensus(timeoutNs: timeoutNs, maximumProcesses: maximumProcesses) { $0 == "/opt/app/bin/app" || $0 == "app" }
    }

    @Test("fork, exec, marker: the exec and the time to the marker, from the kernel's stamps")
    func reached() {
        var census = census()
        census.ingest([
            .forked(parent: 10, child: 100, atNs: 1_000 * ms),
            .execed(pid: 100, filename: "/usr/bin/ls", atNs: 1_003 * ms),
            .libcStarted(pid: 100, atNs: 1_010 * ms),
            .exited(pid: 100, status: 0, atNs: 1_020 * ms),
        ])
        #expect(census.takeFinished() == [
            ExecCensus.Record(program: "/usr/bin/ls", pid: 100, startNs: 1_000 * ms, execNs: 3 * ms, toMarkerNs: 7 * ms, outcome: .reached, status: nil)
        ])
    }

    @Test("a wrapper's exec chain: the first image is replaced, the second starts at its exec (its fork is the first's)")
    func chain() {
        var census = census()
        census.ingest([
            .forked(parent: 10, child: 100, atNs: 0),
            .execed(pid: 100, filename: "/usr/bin/env", atNs: 2 * ms),
            .execed(pid: 100, filename: "/usr/bin/python3", atNs: 5 * ms),
            .libcStarted(pid: 100, atNs: 9 * ms),
        ])
        let records = census.takeFinished()
        #expect(records.map(\.outcome) == [.replaced, .reached])
        #expect(records[1].startNs == 5 * ms && records[1].execNs == nil && records[1].toMarkerNs == 4 * ms)
    }

    @Test("exit before the marker is exited with its status; no marker by the timeout is not-seen; a watched program is not in it")
    func endings() {
        var census = census(timeoutNs: 100 * ms)
        census.ingest([
            .forked(parent: 10, child: 100, atNs: 0),
            .execed(pid: 100, filename: "/usr/bin/missing-lib", atNs: 1 * ms),
            .exited(pid: 100, status: 127 << 8, atNs: 2 * ms),
            .forked(parent: 10, child: 101, atNs: 3 * ms),
            .execed(pid: 101, filename: "/usr/local/bin/static-go", atNs: 4 * ms),
            .forked(parent: 10, child: 102, atNs: 5 * ms),
            .execed(pid: 102, filename: "/opt/app/bin/app", atNs: 6 * ms),
            .libcStarted(pid: 102, atNs: 7 * ms),
            .forked(parent: 10, child: 103, atNs: 8 * ms),
            .execed(pid: 103, filename: "./app", atNs: 9 * ms),
        ])
        var records = census.takeFinished()
        #expect(records.count == 1 && records[0].outcome == .exited && records[0].status == 127 << 8 && records[0].toMarkerNs == nil)
        #expect(records[0].toExitNs == 1 * ms)
        census.expire(nowNs: 50 * ms)
        #expect(census.takeFinished().isEmpty)
        census.expire(nowNs: 104 * ms)
        records = census.takeFinished()
        #expect(records.map(\.program) == ["/usr/local/bin/static-go"] && records[0].outcome == .notSeen)
        // A marker after the record closed (a long-running process) changes nothing.
        census.ingest(.libcStarted(pid: 101, atNs: 200 * ms))
        #expect(census.takeFinished().isEmpty)
    }

    @Test("bounded: the process quiet longest is dropped for room, and counted")
    func bounded() {
        var census = census(maximumProcesses: 2)
        census.ingest([
            .forked(parent: 1, child: 100, atNs: 1 * ms),
            .forked(parent: 1, child: 101, atNs: 2 * ms),
            .forked(parent: 1, child: 102, atNs: 3 * ms),
            .execed(pid: 100, filename: "/bin/true", atNs: 4 * ms),
        ])
        #expect(census.evicted == 2)
        census.ingest(.libcStarted(pid: 100, atNs: 5 * ms))
        // 100's fork was dropped with it: its exec is counted, not timed from a spawn.
        #expect(census.takeFinished().map(\.execNs) == [nil])
    }
}

@Suite("Unwatched execs in /metrics (monitor --all)")
struct UnwatchedExecMetricsTests {
    @Test("the program label is bounded: the first 20 programs seen, then other; promtool reads it")
    func boundedLabels() throws {
        let metrics = FieldMetrics(programs: [], execMarker: .main)
        for index in 0..<25 {
            for _ in 0...index % 3 {
                let record = ExecCensus.Record(
                    program: "/usr/bin/tool\(index)", pid: 1, startNs: 0, execNs: 300_000, toMarkerNs: 700_000, outcome: .reached, status: nil)
                metrics.record(exec: LaunchStore.Exec(record: record, marker: .main, startedAtUnixNs: 0))
            }
        }
        let family = try #require(metrics.exposition().families.first { $0.name == "launchprof_field_unwatched_execs" })
        let programs = Set(family.samples.compactMap { $0.labels.first { $0.name == "program" }?.value })
        #expect(programs.count == FieldMetrics.labelledExecPrograms + 1 && programs.contains(FieldMetrics.otherPrograms))
        // Tools 20–24 exec'd 3, 1, 2, 3 and 1 times.
        let other = family.samples.first { $0.labels.contains { $0.name == "program" && $0.value == "other" } }
        #expect(other?.value == "10")
        let text = metrics.exposition().text(.openMetrics)
        #expect(text.contains("launchprof_field_unwatched_time_to_main_seconds_bucket{program=\"/usr/bin/tool0\",marker=\"main\",le=\"0.001\"} 1"), "\(text)")
        let checked = try Promtool.checkMetrics(metrics.exposition().text(.prometheusText))
        #expect(checked.status == 0, "\(checked.output)")
    }
}

@Suite("monitor --all's libc probe")
struct ExecCensusProbeTests {
    @Test("the marker is main exactly where libc's detached debug file names __libc_start_call_main")
    func markerFollowsDebugSymbols() throws {
        let (probe, reason) = ExecCensus.plan()
        let found = try #require(probe, "\(reason ?? "")")
        let libc = try ELFImage.read(path: found.path)
        let buildID = try #require(libc.buildID)
        let debugFile = "/usr/lib/debug/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug"
        // Read as a symbol table (readelf -s's view), not through the code under test.
        let named = try Self.symbolNames(debugFile).contains("__libc_start_call_main")
        #expect(found.marker == (named ? .main : .libcStart), "\(debugFile): \(named ? "names it" : "absent or without it")")
        // Without the debug directory: the exported start-up.
        #expect(ExecCensus.plan(debugRoot: "/nonexistent").probe?.marker == .libcStart)
    }

    static func symbolNames(_ path: String) throws -> Set<String> {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let listed = try ToolFilter.run("/usr/bin/readelf", ["-sW", path], input: "")
        return Set(listed.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
    }
}
