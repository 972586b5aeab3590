import ArgumentParser
import LaunchprofCore
import LaunchprofMonitor
import LaunchprofReport
import LaunchprofRenderers

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof monitor`: records launches launchprof did not start; `monitor report` reads them.
struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Record the launches of programs anyone starts on this machine (MetricKit's field data, for Linux).",
        discussion: """
            Examples:
              launchprof monitor --store /var/lib/launchprof-monitor --program /usr/bin/gedit --metrics-listen 127.0.0.1:9464
              launchprof monitor report --store /var/lib/launchprof-monitor --program /usr/bin/gedit --json field.json --html field.html

            `launchprof monitor` runs as root until SIGTERM or Ctrl-C (as a service: \
            launchprof-monitor.service). See docs/field-monitoring.md.
            """,
        subcommands: [MonitorRecordCommand.self, MonitorReportCommand.self],
        defaultSubcommand: MonitorRecordCommand.self)
}

struct MonitorRecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record launches until SIGTERM or SIGINT (the default: `launchprof monitor --store …`).",
        discussion: """
            Examples:
              launchprof monitor --store /var/lib/launchprof-monitor --program /usr/bin/gedit
              launchprof monitor --store ./field --program ./build/app --metrics-listen 127.0.0.1:9464

            Every exec, fork and exit on the machine comes from the kernel's tracepoints; each \
            watched program's entry, first initializer and main, and its hooks' USDT probes \
            (launchprof.h, LaunchprofApp), are uprobes in its own file; its windows' first frames \
            come from the X11 display its environment names. Launches are kept in STORE/launches.db \
            (SQLite, WAL: readable while the monitor records) for --retain.

            \(ExitCause.summary([.success, .usage, .noInput, .unavailable, .cannotCreate, .ioError]))
            """)

    @Option(help: ArgumentHelp("The store directory (made, mode 0700; one monitor records into it at a time).", valueName: "dir"))
    var store: String

    @Option(name: .customLong("program"), help: ArgumentHelp("A program whose launches are recorded (repeatable).", valueName: "path"))
    var programs: [String] = []

    @Flag(help: "Record every other program's exec too: its exec time and how it ended (see monitor report --execs). Costs a launch nothing the monitor does not already read.")
    var all = false

    @Flag(help: "--all, with each exec's time to main: one uprobe in libc that every glibc process on the machine hits once (measured: +4% on a 0.6 ms launch).")
    var allMain = false

    @Flag(help: "Probe the loader and the programs' libraries too (loader.map, loader.relocate, loader.init): every process that maps them pays a probe hit.")
    var loaderPhases = false

    @Option(name: .customLong("display"), help: ArgumentHelp("An X11 display to watch from the start (:N); others are found in launches' environments.", valueName: "display"))
    var displays: [String] = []

    @Option(help: ArgumentHelp("Serve Prometheus's /metrics on this address (loopback unless you say otherwise).", valueName: "address:port"))
    var metricsListen: String?

    @Option(help: ArgumentHelp("The bearer token /metrics asks for (default: STORE/metrics.token, made at the first start).", valueName: "file"))
    var metricsTokenFile: String?

    @Option(help: ArgumentHelp("Keep launches this long (e.g. 30d, 12h).", valueName: "duration"), transform: { try MonitorOptionValue.duration($0) })
    var retain: UInt64 = 30 * 86_400 * 1_000_000_000

    @Option(help: ArgumentHelp("A launch with neither a first frame nor an exit by then times out (e.g. 60s).", valueName: "duration"), transform: { try MonitorOptionValue.duration($0) })
    var launchTimeout: UInt64 = 60 * 1_000_000_000

    func validate() throws {
        guard !programs.isEmpty || all || allMain else {
            throw ValidationError("Nothing to watch: give --program PATH (repeatable), --all or --all-main.")
        }
        if let listen = metricsListen, !MetricsServer.isLoopback(listen) {
            Terminal.write(2, "launchprof: /metrics on \(listen) is reachable beyond this machine (the bearer token still guards it)\n")
        }
    }

    func run() throws {
        var configuration = MonitorConfiguration(store: store, programs: programs)
        configuration.loaderPhases = loaderPhases
        configuration.all = all || allMain
        configuration.allMain = allMain
        configuration.displays = displays
        configuration.metricsListen = metricsListen
        configuration.metricsTokenFile = metricsTokenFile
        configuration.retainNs = retain
        configuration.launchTimeoutNs = launchTimeout
        let monitor = try FieldMonitor(configuration: configuration) { Terminal.write(2, "launchprof monitor: \($0)\n") }
        for program in monitor.programs {
            let hooks = program.hasHookProbes ? "its hooks' USDT probes" : "no hook probes (built without sys/sdt.h?)"
            Terminal.write(2, "launchprof monitor: watching \(program.path): \(program.probes.count) probes, \(hooks)\n")
        }
        if all || allMain {
            let marker = monitor.censusMarker.map { "with their time to \($0.meaning)" } ?? "their exec and exit (no time to main: --all-main)"
            Terminal.write(2, "launchprof monitor: --all: every other program's exec recorded, \(marker)\n")
        }
        if let address = monitor.metricsAddress {
            Terminal.write(2, "launchprof monitor: /metrics on http://\(address)/metrics (bearer token in \(monitor.tokenPath ?? "?"))\n")
        }
        Terminal.write(2, "launchprof monitor: recording into \(store) until SIGTERM or SIGINT\n")
        let signal = try monitor.run()
        monitor.stop()
        let name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : signal == SIGHUP ? "SIGHUP" : "signal \(signal)"
        Terminal.write(2, "launchprof monitor: stopped by \(name): \(monitor.recorded) launches recorded\(all || allMain ? ", \(monitor.execsRecorded) unwatched execs" : ""); probes released\n")
    }
}

struct MonitorReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write the launches a monitor recorded as a launch report, an HTML page or MetricKit payloads.",
        discussion: """
            Examples:
              launchprof monitor report --store /var/lib/launchprof-monitor --program /usr/bin/gedit --json gedit.json
              launchprof monitor report --store ./field --program ./build/app --since 7d --html app.html

            The JSON is the report `launchprof run --json` writes: `report --html`, `compare`, \
            `merge` and `export` read it. Cold launches only unless --start-type says otherwise. \
            Works while the monitor records.

            \(ExitCause.summary([.success, .usage, .noInput, .cannotCreate, .ioError]))
            """)

    @Option(help: ArgumentHelp("The monitor's store directory.", valueName: "dir"))
    var store: String

    @Option(help: ArgumentHelp("The program (as watched; optional when the store holds one).", valueName: "path"))
    var program: String?

    @Option(help: ArgumentHelp("Write the launch report (JSON) to this file, - for standard output.", valueName: "file"))
    var json: String?

    @Option(help: ArgumentHelp("Write the HTML report to this file.", valueName: "file"))
    var html: String?

    @Option(help: ArgumentHelp("Write MetricKit's metrics.json and diagnostics.json of these launches into this directory.", valueName: "dir"))
    var metrickit: String?

    @Option(help: ArgumentHelp("Write the unwatched programs' execs (monitor --all), per program, as JSON to this file, - for standard output.", valueName: "file"))
    var execs: String?

    @Option(help: ArgumentHelp("--execs lists this many programs, the most exec'd first; the rest are summed as other.", valueName: "n"))
    var top = 50

    @Option(help: ArgumentHelp("Only launches since then: a duration back from now (7d, 12h) or a UTC day (2026-12-01).", valueName: "when"))
    var since: String?

    @Option(help: ArgumentHelp("cold, forked, resumed, broughtToFront or all (repeatable; default cold).", valueName: "type"))
    var startType: [String] = []

    func validate() throws {
        guard json != nil || html != nil || metrickit != nil || execs != nil else {
            throw ValidationError("Nothing to write: give --json FILE, --html FILE, --metrickit DIR and/or --execs FILE.")
        }
        guard top > 0 else { throw ValidationError("--top \(top): give a positive number.") }
        try OutputChecks.file(execs, option: "--execs")
        try OutputChecks.file(json, option: "--json")
        try OutputChecks.file(html, option: "--html")
        try OutputChecks.folder(metrickit, option: "--metrickit")
        try OutputChecks.distinct([("--json \(json ?? "")", json), ("--html \(html ?? "")", html), ("--execs \(execs ?? "")", execs)])
        if let since, MonitorTime.since(since, nowUnixNs: 0) == nil {
            throw ValidationError("--since \(since): give a duration (7d, 12h, 30m) or a UTC day (2026-12-01).")
        }
        _ = try startTypes()
    }

    func startTypes() throws -> Set<FieldLaunchFacts.StartType> {
        var types: Set<FieldLaunchFacts.StartType> = []
        for value in startType {
            if value == "all" {
                types.formUnion(FieldLaunchFacts.StartType.allCases)
            } else if let type = FieldLaunchFacts.StartType(rawValue: value) {
                types.insert(type)
            } else {
                throw ValidationError("--start-type \(value): use cold, forked, resumed, broughtToFront or all.")
            }
        }
        return types.isEmpty ? [.cold] : types
    }

    func run() throws {
        let launches = try LaunchStore.openForReading(store)
        let nowUnixNs = Int64(time(nil)) * 1_000_000_000
        let sinceNs = since.flatMap { MonitorTime.since($0, nowUnixNs: nowUnixNs) } ?? .min
        if let execs {
            let summary = try ExecSummary.read(launches, sinceUnixNs: sinceNs, top: top)
            let output = try OutputDestination(execs).open()
            try output.write(summary.encoded())
            try output.commit()
            if execs != "-" {
                Terminal.write(2, "launchprof: \(summary.programs.count + (summary.other == nil ? 0 : 1)) programs' execs written to \(execs)\n")
            }
            guard json != nil || html != nil || metrickit != nil else { return }
        }
        let stored = try launches.programs()
        let path: String
        if let program {
            // As the monitor stored it: the real path.
            path = realpath(program, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? program
        } else if stored.count == 1 {
            path = stored[0].path
        } else {
            let names = stored.map { "  \($0.path) (\($0.launches) launches)" }.joined(separator: "\n")
            throw ValidationError(
                stored.isEmpty ? "\(store) holds no launches yet." : "Give --program: \(store) holds launches of\n\(names)")
        }
        let selection = LaunchStore.Selection(program: path, sinceUnixNs: sinceNs, startTypes: try startTypes())
        let count = try launches.count(selection)
        guard count > 0 else {
            let known = stored.first { $0.path == path }.map { "\($0.launches) launches of it in all, none selected" } ?? "no launches of it"
            throw MonitorError.noStore(path: "\(store) (\(path): \(known))")
        }
        for (source, lost) in try launches.losses(sinceUnixNs: sinceNs).sorted(by: { $0.key < $1.key }) where lost > 0 {
            Terminal.write(2, "launchprof: warning: the monitor recorded \(lost) lost events (\(source)) in this period: launches may be missing\n")
        }
        if let json {
            let written = try FieldReport.write(launches, selection, path: path, to: try OutputDestination(json).open())
            if json != "-" { Terminal.write(2, "launchprof: \(written) launches of \(path) written to \(json)\n") }
        }
        if html != nil || metrickit != nil, let report = try FieldReport.report(launches, selection, path: path) {
            if let html {
                try ReportFiles.write(Array(try HTMLReportRenderer().render(report).utf8), to: html)
                Terminal.write(2, "launchprof: HTML report written to \(html)\n")
            }
            if let metrickit {
                let span = try launches.span(selection)
                try FieldPayloads.write(
                    FieldPayloads.countedAsResume(report), into: metrickit,
                    beganAtSeconds: (span?.first ?? 0) / 1_000_000_000, endedAtSeconds: (span?.last ?? 0) / 1_000_000_000)
                Terminal.write(2, "launchprof: MetricKit payloads written to \(metrickit)\n")
            }
        }
    }
}

/// Durations as the monitor's options take them.
enum MonitorOptionValue {
    static func duration(_ text: String) throws -> UInt64 {
        guard let value = MonitorTime.duration(text) else {
            throw OptionValue.Invalid(description: "give a positive duration with its unit: 30d, 12h, 15m, 45s or 500ms")
        }
        return value
    }
}
