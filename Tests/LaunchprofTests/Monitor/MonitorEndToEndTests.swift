import Foundation
import LaunchprofMonitor
import LaunchprofReport
import Testing

/// `launchprof monitor` as a user runs it: launches started by a plain shell (no launchprof in
/// between) recorded with their `main` and hook phases, checked against the program's own clock;
/// `/metrics` scraped by a real Prometheus; `monitor report`'s JSON read by the report schema and
/// by `report --html`.
@Suite("launchprof monitor, end to end", .serialized)
struct MonitorEndToEndTests {
    /// run-app.c (hooks, truth on its own clock) in a directory of its own: no other launchprof's
    /// probes are on this file.
    static func app(_ name: String) throws -> String {
        try RunFixtures.app(directory: "monitor-\(name)", name: "field-app")
    }

    static let phases = "willFinishLaunching:2000:0,didFinishLaunching:3000:1000"

    @Test("20 launches from a shell: main and hook phases on the app's clock, 20 in Prometheus")
    func shellLaunchesScrapedByPrometheus() throws {
        let app = try Self.app("e2e")
        let work = try MonitorProcess.scratch("monitor-e2e")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store").path
        let truth = work.appendingPathComponent("truth").path
        let monitor = try MonitorProcess(store: store, ["--program", app, "--metrics-listen", "127.0.0.1:0"])
        let port = try #require(monitor.metricsPort, "no /metrics address in: \(monitor.stderr)")

        try MonitorProcess.shell(
            "i=0; while [ $i -lt 20 ]; do \"$APP\"; i=$((i + 1)); done",
            environment: ["APP": app, "LP_FIXTURE_TRUTH": truth, "LP_PHASES": Self.phases])

        let prometheus = try PrometheusServer(
            scrape: "127.0.0.1:\(port)", bearerTokenFile: store + "/" + MetricsToken.fileName, directory: work)
        defer { prometheus.stop() }
        let query = "sum(launchprof_field_launches_total{program=\"\(app)\"})"
        let value = try prometheus.waitForValue(query, toBe: "20", timeout: 60)
        #expect(value == "20", "Prometheus: \(query) = \(value ?? "nothing"); the monitor said: \(monitor.stderr)")
        let frames = try prometheus.waitForValue(
            "launchprof_field_time_to_first_frame_seconds_count{program=\"\(app)\"}", toBe: "20", timeout: 30)
        #expect(frames == "20")

        #expect(monitor.stop() == 0, "\(monitor.stderr)")
        #expect(monitor.stderr.contains("stopped by SIGTERM: 20 launches recorded"), "\(monitor.stderr)")

        let json = work.appendingPathComponent("field.json").path
        let reported = try LaunchprofCLI.run(["monitor", "report", "--store", store, "--program", app, "--json", json])
        #expect(reported.status == 0, "\(reported.stderr)")
        try SchemaValidator.expectValid(file: json, against: .launchReport)
        let report = try LaunchReportDecoder.decode(Array(try Data(contentsOf: URL(fileURLWithPath: json))), path: json)
        #expect(report.runs.count == 20)
        #expect(report.mode.observer == "monitor")
        let truths = try FixtureTruth(contentsOf: truth).entries
        let mains = truths.filter { $0.kind == "main" }.map(\.beginNs).sorted()
        let constructors = truths.filter { $0.kind == "ctor" }.map(\.endNs).sorted()
        #expect(mains.count == 20 && constructors.count == 20)
        for ((run, truthMain), constructorEnd) in zip(zip(report.runs, mains), constructors) {
            #expect(run.field?.startType == .cold)
            let spawn = try #require(run.spawnedAt?.monotonicNs)
            let toMain = try #require(run.metrics.timeToMainNs, "run \(run.index): no main (\(run.absent))")
            // The app's clock brackets its main's entry: after its own constructor ended, before
            // main's first line read the clock (a preemption in between, on a loaded machine,
            // widens the bracket, never moves the entry out of it).
            let main = spawn + toMain
            let tolerance = max(1_000_000, toMain / 10)
            #expect(
                main + tolerance >= constructorEnd && main <= truthMain + tolerance,
                "run \(run.index): main at \(main), the app's clock: constructor ended \(constructorEnd), main read \(truthMain)")
            let calls = truths.filter { $0.kind == "hook-call" && $0.beginNs >= truthMain && $0.beginNs <= truthMain + 1_000_000_000 }
            for name in ["willFinishLaunching", "didFinishLaunching"] {
                let phase = try #require(run.phases.first { $0.name == name }, "run \(run.index): no \(name) in \(run.phases.map(\.name))")
                // Each boundary is the hook's USDT probe: between the app's clock just before
                // the hook call and just after it.
                for (kind, at) in [("begin", spawn + phase.startNs), ("end", spawn + phase.startNs + phase.durationNs)] {
                    let call = try #require(calls.first { $0.name == "\(kind):\(name)" }, "run \(run.index): no hook-call \(kind):\(name)")
                    #expect(
                        at + 200_000 >= call.beginNs && at <= call.endNs + 200_000,
                        "run \(run.index) \(name) \(kind) at \(at): the app called at \(call.beginNs), returned at \(call.endNs)")
                }
            }
            #expect(run.metrics.timeToFirstFrameNs != nil && run.resolvedOutcome.kind == .completed)
        }
        // The report is one `report --html` and `export` read.
        let page = work.appendingPathComponent("field.html").path
        #expect(try LaunchprofCLI.run(["report", json, "--html", page]).status == 0)
        let exported = try LaunchprofCLI.run(["export", "--prometheus", json])
        #expect(exported.status == 0)
        let checked = try Promtool.checkMetrics(exported.stdout)
        #expect(checked.status == 0, "\(checked.output)")
    }

    /// `--all-main`, nothing watched: 20 shell launches of the app (2 ms of work in its own
    /// constructor) are each a census row whose marker lies on the app's clock — `main`: between
    /// its constructor's end and main's first clock read; libc's start-up: before its constructor
    /// began — and `monitor report --execs` lists it and /bin/true.
    @Test("--all-main: 20 unwatched launches from a shell, each with its time to main on the app's clock")
    func allExecs() throws {
        let app = try Self.app("all")
        let work = try MonitorProcess.scratch("monitor-all")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store").path
        let truth = work.appendingPathComponent("truth").path
        let monitor = try MonitorProcess(store: store, ["--all-main"])
        try MonitorProcess.shell(
            "i=0; while [ $i -lt 20 ]; do \"$APP\"; /bin/true; i=$((i + 1)); done",
            environment: ["APP": app, "LP_FIXTURE_TRUTH": truth, "LP_PROGRAM_BUSY_US": "2000"])
        // Every row is committed by the time the monitor has stopped.
        #expect(monitor.stop() == 0, "\(monitor.stderr)")
        #expect(monitor.stderr.contains("--all: every other program's exec recorded, with their time to"), "\(monitor.stderr)")

        var rows: [LaunchStore.Exec] = []
        var trues = 0
        try LaunchStore.openForReading(store).forEachExec(sinceUnixNs: .min) { exec in
            if exec.record.program == app { rows.append(exec) }
            if exec.record.program == "/bin/true" { trues += 1 }
        }
        #expect(rows.count == 20, "\(rows.count) rows of \(app); the monitor said: \(monitor.stderr)")
        #expect(trues >= 20)
        let truths = try FixtureTruth(contentsOf: truth).entries
        let mains = truths.filter { $0.kind == "main" }.map(\.beginNs).sorted()
        let constructors = truths.filter { $0.kind == "ctor" }.sorted { $0.beginNs < $1.beginNs }
        #expect(mains.count == 20 && constructors.count == 20)
        // The rows' wall clock back on the monotonic clock the app reads.
        var realtime = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let offset = (Int64(realtime.tv_sec) - Int64(monotonic.tv_sec)) * 1_000_000_000 + Int64(realtime.tv_nsec) - Int64(monotonic.tv_nsec)
        for ((row, truthMain), constructor) in zip(zip(rows, mains), constructors) {
            let record = row.record
            #expect(record.outcome == .reached && record.status == nil)
            let exec = try #require(record.execNs, "\(record): the shell's fork was not seen")
            let toMarker = try #require(record.toMarkerNs)
            let marker = UInt64(row.startedAtUnixNs - offset) + exec + toMarker
            let tolerance = max(1_000_000, (exec + toMarker) / 10)
            switch row.marker {
            case .main:
                #expect(
                    marker + tolerance >= constructor.endNs && marker <= truthMain + tolerance,
                    "main at \(marker): the app's constructor ended \(constructor.endNs), main read \(truthMain)")
            case .libcStart:
                #expect(marker <= constructor.beginNs + tolerance, "libc's start-up at \(marker): the constructor began \(constructor.beginNs)")
            case .unprobed:
                Issue.record("no libc probe: \(monitor.stderr)")
            }
        }

        let summaryFile = work.appendingPathComponent("execs.json").path
        let reported = try LaunchprofCLI.run(["monitor", "report", "--store", store, "--execs", summaryFile])
        #expect(reported.status == 0, "\(reported.stderr)")
        let summary = try JSONDecoder().decode(ExecSummary.self, from: Data(contentsOf: URL(fileURLWithPath: summaryFile)))
        let listed = try #require(summary.programs.first { $0.program == app }, "\(summary.programs.map(\.program))")
        #expect(listed.execs == 20 && listed.timed == 20 && listed.outcomes == ["reached": 20])
        #expect(summary.programs.contains { $0.program == "/bin/true" })
    }

    /// The plain xcb fixture on Xvfb, 6 launches from a shell; the monitor is told no display: it
    /// finds it in the first launch's environment, and watches it from then on. Each launch's
    /// first frame lies between the fixture's clock just before its drawing request and after
    /// the server's answer to its round trip, as spans from main (max(2 ms, 2%) either side, as
    /// for `run`). The first launch raced the monitor's connection to the display: its frame is
    /// seen, or absent with that reason, never its exit standing in for it.
    @Test("5 launches of an X11 app on Xvfb from a shell after the first: each with its first frame on the app's clock")
    func x11FirstFrames() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let app = try FixtureBuilder.build(["frame-x11.c"], output: "monitor-x11/field-frame-x11", flags: ["-lxcb"])
        let work = try MonitorProcess.scratch("monitor-x11")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store").path
        let truth = work.appendingPathComponent("truth").path
        let monitor = try MonitorProcess(store: store, ["--program", app])
        try MonitorProcess.shell(
            "for i in 1 2 3 4 5 6; do \"$APP\" || exit 1; done",
            environment: ["APP": app, "DISPLAY": server.display, "LP_FIXTURE_TRUTH": truth, "FRAME_EXIT": "1"])
        #expect(monitor.stop() == 0, "\(monitor.stderr)")

        let json = work.appendingPathComponent("x11.json").path
        let reported = try LaunchprofCLI.run(["monitor", "report", "--store", store, "--program", app, "--json", json])
        #expect(reported.status == 0, "\(reported.stderr)")
        let report = try LaunchReportDecoder.decode(Array(try Data(contentsOf: URL(fileURLWithPath: json))), path: json)
        try #require(report.runs.count == 6, "the monitor said: \(monitor.stderr)")
        let truths = try FixtureTruth(contentsOf: truth).entries
        let mains = truths.filter { $0.kind == "main" }.sorted { $0.beginNs < $1.beginNs }
        let shown = truths.filter { $0.kind == "first-frame" }.sorted { $0.beginNs < $1.beginNs }
        try #require(mains.count == 6 && shown.count == 6, "the fixture's truth: \(truths)")
        for (index, run) in report.runs.enumerated() {
            #expect(run.field?.startType == .cold)
            if index == 0, run.metrics.timeToFirstFrameNs == nil {
                let absent = run.absent.first { $0.phase == LaunchPhase.firstFrame }?.reason ?? ""
                #expect(absent.contains("was first watched during this launch"), "run 0: \(run.absent)")
                continue
            }
            let main = try #require(run.phases.first { $0.name == LaunchPhase.main }?.startNs, "run \(index): no main")
            let frame = try #require(
                run.phases.first { $0.name == LaunchPhase.firstFrame }?.startNs,
                "run \(index): no first frame (\(run.absent)); the monitor said: \(monitor.stderr)")
            #expect(run.phases.contains { $0.name == LaunchPhase.windowMapped }, "run \(index): no windowMapped; phases \(run.phases.map { "\($0.name)@\($0.startNs)" })")
            let sent = Int64(shown[index].beginNs) - Int64(mains[index].beginNs)
            let answered = Int64(shown[index].endNs) - Int64(mains[index].beginNs)
            let measured = Int64(frame) - Int64(main)
            let bound = max(2_000_000, answered / 50)
            #expect(
                measured >= sent - bound && measured <= answered + bound,
                "run \(index): first frame \(measured) ns after main; the app drew at \(sent) ns, answered at \(answered) ns")
            #expect(run.metrics.timeToFirstFrameNs == frame && run.resolvedOutcome.kind == .completed)
        }
    }

    @Test("SIGKILL, then a restart: the store opens with every launch, no probe is left installed")
    func killedAndRestarted() throws {
        let app = try Self.app("kill")
        let work = try MonitorProcess.scratch("monitor-kill")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store").path
        let main = try #require(try Self.mainProbeOffset(app))
        #expect(try Self.byte(of: app, at: main) != 0xcc, "a probe is on \(app) before the monitor starts")

        var monitor = try MonitorProcess(store: store, ["--program", app])
        #expect(try Self.byte(of: app, at: main) == 0xcc, "the monitor's probe on main is not installed")
        try MonitorProcess.shell("\"$APP\"; \"$APP\"; \"$APP\"", environment: ["APP": app])
        // Recorded within a pass: read while it records (WAL), before the kill.
        let recorded = try Self.waitForLaunches(store: store, program: app, count: 3)
        #expect(recorded == 3)
        #expect(monitor.stop(SIGKILL) == 9)
        // The kernel closed its events: the probe is gone from every new mapping.
        #expect(try Self.byte(of: app, at: main) != 0xcc, "a probe outlived the killed monitor")

        monitor = try MonitorProcess(store: store, ["--program", app])
        try MonitorProcess.shell("\"$APP\"", environment: ["APP": app])
        #expect(monitor.stop() == 0)
        let reader = try LaunchStore.openForReading(store)
        #expect(try reader.count(LaunchStore.Selection(program: app)) == 4)
        // Stopped cleanly: no probe, no definition of the monitor's left in tracefs on this
        // test's file (other monitors on the machine, another test's, keep theirs).
        #expect(try Self.byte(of: app, at: main) != 0xcc)
        let left = try TracefsEvents().definitions().filter { $0.contains(" \(app):") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a second monitor on the same store is refused; the store is its owner's alone")
    func oneMonitorPerStore() throws {
        let app = try Self.app("busy")
        let work = try MonitorProcess.scratch("monitor-busy")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store").path
        let monitor = try MonitorProcess(store: store, ["--program", app, "--metrics-listen", "127.0.0.1:0"])
        let second = try LaunchprofCLI.run(["monitor", "--store", store, "--program", app])
        #expect(second.status == 69, "\(second.stderr)")
        #expect(second.stderr.contains("another launchprof monitor (process \(monitor.process.processIdentifier))"), "\(second.stderr)")
        for (path, mode) in [(store, 0o700), (store + "/launches.db", 0o600), (store + "/metrics.token", 0o600)] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == mode, "\(path)")
        }
        #expect(monitor.stop(SIGINT) == 0)
        #expect(monitor.stderr.contains("stopped by SIGINT"))
    }

    @Test("1,000 launches of a watched program as fast as a shell makes them: each recorded, or counted lost")
    func manyLaunches() throws {
        let program = try FixtureBuilder.build(["field-true.c"], output: "monitor-many/field-true")
        let work = try MonitorProcess.scratch("monitor-many")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store").path
        let monitor = try MonitorProcess(store: store, ["--program", program])
        try MonitorProcess.shell("i=0; while [ $i -lt 1000 ]; do \"$P\"; i=$((i + 1)); done", environment: ["P": program])
        #expect(monitor.stop() == 0)
        let reader = try LaunchStore.openForReading(store)
        let recorded = try reader.count(LaunchStore.Selection(program: program))
        let lost = try reader.losses().values.reduce(0, +)
        #expect(recorded == 1000 || (recorded < 1000 && lost > 0), "recorded \(recorded), lost \(lost)")
        #expect(recorded >= 900, "recorded \(recorded) of 1000 (lost \(lost))")
    }

    // MARK: Helpers

    /// Where the monitor probes `main` in `path`: the offset its plan gives.
    static func mainProbeOffset(_ path: String) throws -> UInt64? {
        let plan = try WatchedProgram.plan(path, loaderPhases: false)
        return plan.probes.first { probe in
            if case .boundaries(let boundaries, _) = probe.meaning { boundaries.contains(.main) } else { false }
        }?.offset
    }

    /// The byte at `offset` of `path` as a fresh private mapping shows it: a held uprobe shows
    /// as 0xcc in every mapping of the file made while it is held.
    static func byte(of path: String, at offset: UInt64) throws -> UInt8 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MonitorProcess.Failure(description: "cannot open \(path)") }
        defer { close(fd) }
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        let base = offset / page * page
        guard let mapped = mmap(nil, Int(page), PROT_READ, MAP_PRIVATE, fd, off_t(base)), mapped != MAP_FAILED else {
            throw MonitorProcess.Failure(description: "cannot map \(path)")
        }
        defer { munmap(mapped, Int(page)) }
        return mapped.load(fromByteOffset: Int(offset - base), as: UInt8.self)
    }

    /// Waits until the store holds `count` launches of `program` (the monitor commits every
    /// pass, a quarter of a second apart), reading it as `monitor report` does.
    static func waitForLaunches(store: String, program: String, count: Int) throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        var found = 0
        while Date() < deadline {
            found = (try? LaunchStore.openForReading(store).count(LaunchStore.Selection(program: program))) ?? 0
            if found >= count { return found }
            // The store has no event to wait on: its commits are polled, each read a snapshot.
            usleep(100_000)
        }
        return found
    }
}
