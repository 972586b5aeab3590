import CLaunchprof
import LaunchprofCore
import LaunchprofReport
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof monitor`: records the launches of watched programs that anyone starts on the
/// machine, until SIGTERM, SIGINT or SIGHUP.
///
/// One loop on one thread: it sleeps in `poll` on the kernel's rings and the stop signals. A
/// watched program's exec wakes it to watch that program's display before its first window, and
/// nothing more; a pass runs every `tickNs`, or when a ring is a quarter full — never at each exit
/// message, which every process on the machine sends. Each pass reads everything waiting (the
/// exit messages too),
/// puts the kernel's and the displays' events in time order (an event is used once every source
/// has had the chance to deliver what came before it: 20 ms for the kernel's, and no display
/// thread still handling earlier events), assembles launches, and stores the
/// finished ones with the events lost in one transaction. `/metrics` is served from another
/// thread, and each display watched has one.
///
/// Stopping releases what the monitor holds in the kernel: closing its perf events removes its
/// probes from every process; its tracefs definitions are then deleted; the database is closed.
/// Killed instead (SIGKILL), the kernel closes the events itself, and the next monitor deletes the
/// definitions left behind; whatever it committed is in the store.
public final class FieldMonitor {
    public let configuration: MonitorConfiguration
    public let programs: [WatchedProgram]
    public let store: LaunchStore
    public let metrics: FieldMetrics
    /// The address `/metrics` is served on, when it is.
    public var metricsAddress: String? { server?.address }
    /// Where the endpoint's token is.
    public let tokenPath: String?

    private let tracefs: TracefsEvents
    private let source: FieldEventSource
    /// Execs of the watched programs' file names, read at once (their displays are watched
    /// before their first window); nil where the kernel refused the filter.
    private let prompt: FieldEventSource?
    private let exits: ProcessExitConnector
    private let server: MetricsServer?
    private let displays: FieldDisplays
    private let displayEvents = EventQueue()
    private let stopSignals: Int32
    private let say: @Sendable (String) -> Void
    private let host: LaunchReport.Host

    private var assembler: FieldLaunchAssembler
    /// `--all`: the unwatched programs' execs, and what its libc probe marks (nil: no probe).
    private var census: ExecCensus?
    public private(set) var censusMarker: ExecCensus.Marker?
    private var reorder: [FieldEvent] = []
    private var reported = Losses()
    private var lastMaintenanceNs: UInt64 = 0
    /// Launches recorded by this monitor.
    public private(set) var recorded = 0
    /// Unwatched execs recorded (`--all`).
    public private(set) var execsRecorded = 0

    /// Events are used once they are this old: every source has delivered what came before.
    static let settleNs: UInt64 = 20_000_000
    /// Retention and payloads are seen to this often.
    static let maintenanceNs: UInt64 = 60_000_000_000

    struct Losses: Equatable {
        var kernel: UInt64 = 0
        var malformed: UInt64 = 0
        var exits: UInt64 = 0
        var evicted: UInt64 = 0
        var launches: UInt64 = 0
    }

    /// Opens the store (refusing a second monitor on it), plans the programs' probes, opens the
    /// kernel's events and the endpoint. Call from the main thread before starting any other:
    /// the stop signals are blocked here and read from a descriptor, for every thread.
    public init(configuration: MonitorConfiguration, say: @escaping @Sendable (String) -> Void) throws(MonitorError) {
        self.configuration = configuration
        self.say = say
        var signals: Int32 = -1
        let error = lp_field_stop_signals(&signals)
        guard error == 0 else { throw .kernelEvent(what: "the stop signals", errno: error) }
        stopSignals = signals
        store = try LaunchStore.openForRecording(configuration.store)
        var programs: [WatchedProgram] = []
        for path in configuration.programs {
            programs.append(try WatchedProgram.plan(path, loaderPhases: configuration.loaderPhases))
        }
        self.programs = programs
        host = HostInfo.current()
        assembler = FieldLaunchAssembler(programs: programs, timeoutNs: configuration.launchTimeoutNs)

        tracefs = try TracefsEvents()
        tracefs.removeStale()
        source = try FieldEventSource()
        try source.addProcessEvents(tracefs)
        let libcProbe = try Self.addProbes(programs, allMain: configuration.allMain, tracefs: tracefs, source: source, say: say)
        if configuration.all || configuration.allMain {
            census = ExecCensus(timeoutNs: configuration.launchTimeoutNs, isWatched: Self.watchedExecs(programs))
            censusMarker = libcProbe?.marker
        }
        metrics = FieldMetrics(programs: programs.map(\.path), execMarker: configuration.all || configuration.allMain ? libcProbe?.marker ?? .unprobed : nil)
        exits = try ProcessExitConnector()
        prompt = Self.promptExecs(programs, tracefs: tracefs)

        if let listen = configuration.metricsListen {
            let tokenPath = configuration.metricsTokenFile ?? configuration.store + "/" + MetricsToken.fileName
            let token = try MetricsToken.load(tokenPath, create: configuration.metricsTokenFile == nil)
            server = try MetricsServer(listen: listen, token: token, metrics: metrics)
            self.tokenPath = tokenPath
        } else {
            server = nil
            tokenPath = nil
        }
        let queue = displayEvents
        displays = FieldDisplays(programs: programs, say: say) { event in queue.append(event) }
        for display in configuration.displays { displays.watch(display) }
        // Instances already running: later launches may hand over to them, their forks may be
        // launches, and their displays are watched.
        for (pid, program) in Self.runningInstances(programs) {
            assembler.running(pid: pid, program: program)
            displays.watchDisplay(ofProcess: pid)
        }
        try source.enable()
        try prompt?.enable()
    }

    deinit { close(stopSignals) }

    /// Is an exec'd path a watched program's? By its absolute paths, or its file name when the exec
    /// named it relatively (as the assembler matches a launch that failed before its code).
    static func watchedExecs(_ programs: [WatchedProgram]) -> @Sendable (String) -> Bool {
        let paths = Set(programs.flatMap { [$0.givenPath, $0.path] }.filter { $0.hasPrefix("/") })
        let names = Set(programs.flatMap(\.fileNames))
        return { filename in
            filename.hasPrefix("/") ? paths.contains(filename) : names.contains(WatchedProgram.fileName(filename))
        }
    }

    /// The uprobes of every watched program, shared where two name the same file and offset, and
    /// `--all-main`'s one probe in libc (returned; nil, said why, when it cannot be placed).
    static func addProbes(
        _ programs: [WatchedProgram], allMain: Bool = false, tracefs: TracefsEvents, source: FieldEventSource,
        say: (String) -> Void = { _ in }
    ) throws(MonitorError) -> ExecCensus.Probe? {
        var rules: [String: (path: String, offset: UInt64, argument: String?, rule: FieldRecordDecoder.Rule)] = [:]
        var order: [String] = []
        for (index, program) in programs.enumerated() {
            for probe in program.probes {
                let key = "\(probe.path)\u{0}\(probe.offset)"
                switch probe.meaning {
                case .boundaries(let boundaries, let own):
                    if case .boundary(let owner, let old)? = rules[key]?.rule {
                        rules[key]?.rule = .boundary(program: owner, boundaries: old + boundaries.filter { !old.contains($0) })
                    } else {
                        rules[key] = (probe.path, probe.offset, nil, .boundary(program: own ? index : nil, boundaries: boundaries))
                        order.append(key)
                    }
                case .hook(let kind, let argument):
                    if rules[key] == nil {
                        rules[key] = (probe.path, probe.offset, argument, .hook(kind: kind, name: nil))
                        order.append(key)
                    }
                }
            }
        }
        for key in order {
            guard let entry = rules[key] else { continue }
            let event = try tracefs.uprobe(path: entry.path, offset: entry.offset, arguments: entry.argument.map { [$0] } ?? [])
            var rule = entry.rule
            if case .hook(let kind, _) = rule {
                rule = .hook(kind: kind, name: entry.argument == nil ? nil : event.fields["name"])
            }
            try source.add(tracepoint: event.id, name: "the uprobe on \(entry.path)+0x\(String(entry.offset, radix: 16))", rule: rule)
        }
        guard allMain else { return nil }
        let (probe, reason) = ExecCensus.plan()
        guard let probe else {
            say("--all-main: no time to main for unwatched programs: \(reason ?? "no libc probe"); their execs are recorded")
            return nil
        }
        guard rules["\(probe.path)\u{0}\(probe.offset)"] == nil else {
            // A watched program's loader probe is on the same instruction: one probe, one meaning.
            say("--all-main: no time to main for unwatched programs: a watched program's probe is on \(probe.path)'s start-up")
            return nil
        }
        let event = try tracefs.uprobe(path: probe.path, offset: probe.offset, arguments: [])
        try source.add(tracepoint: event.id, name: "the uprobe on \(probe.path)'s \(probe.marker.rawValue)", rule: .libcStart)
        return probe
    }

    /// The exec tracepoint once more, filtered by the kernel to the watched programs' file
    /// names, each sample waking the loop.
    static func promptExecs(_ programs: [WatchedProgram], tracefs: TracefsEvents) -> FieldEventSource? {
        let names = Set(programs.flatMap(\.fileNames)).sorted()
        guard !names.isEmpty, names.allSatisfy({ $0.utf8.allSatisfy { $0 > 0x20 && $0 != 0x22 && $0 != 0x5c && $0 < 0x7f } }),
            let exec = try? tracefs.tracepoint("sched/sched_process_exec"),
            let filename = exec.fields["filename"], let pid = exec.fields["pid"],
            let source = try? FieldEventSource(dataPages: 8, wakeupBytes: 1)
        else { return nil }
        let filter = names.map { "filename ~ \"*/\($0)\" || filename == \"\($0)\"" }.joined(separator: " || ")
        do throws(MonitorError) {
            try source.add(tracepoint: exec.id, name: "sched/sched_process_exec (watched)", filter: filter, rule: .exec(filename: filename, pid: pid))
            return source
        } catch {
            return nil
        }
    }

    /// Processes already running a watched program (by their executable's identity).
    static func runningInstances(_ programs: [WatchedProgram]) -> [(Int32, Int)] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var found: [(Int32, Int)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid > 0, pid != getpid() else { continue }
            var status = stat()
            guard stat("/proc/\(pid)/exe", &status) == 0,
                let index = programs.firstIndex(where: { $0.device == UInt64(status.st_dev) && $0.inode == UInt64(status.st_ino) })
            else { continue }
            found.append((pid, index))
        }
        return found
    }

    // MARK: The loop

    /// Records until a stop signal arrives; returns it.
    @discardableResult
    public func run() throws(MonitorError) -> Int32 {
        // The exit messages are read on each pass, never waited on: every process's exit on the
        // machine would wake the loop (their buffer holds several seconds of a busy machine's).
        var descriptors = [pollfd(fd: stopSignals, events: Int16(POLLIN), revents: 0)]
        for fd in source.pollDescriptors + (prompt?.pollDescriptors ?? []) {
            descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        }
        let rings = 1...source.pollDescriptors.count
        var nextPassNs = lp_now_ns() + configuration.tickNs
        lastMaintenanceNs = lp_now_ns()
        try maintain()
        while true {
            for index in descriptors.indices { descriptors[index].revents = 0 }
            let now = lp_now_ns()
            let timeoutMs = nextPassNs > now ? Int32(clamping: (nextPassNs - now) / 1_000_000 + 1) : 0
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeoutMs)
            if ready < 0 && errno != EINTR { throw .kernelEvent(what: "poll", errno: errno) }
            if descriptors[0].revents != 0 {
                let signal = lp_field_stop_signal_read(stopSignals)
                try pass(final: true)
                return Int32(signal)
            }
            // A watched program's exec alone: its display is watched at once (before its first
            // window), and the rest waits for the tick or a filling ring, so that the monitor's
            // work (assembly, the store) does not compete with the launch it just saw begin.
            if rings.contains(where: { descriptors[$0].revents != 0 }) || lp_now_ns() >= nextPassNs {
                try pass(final: false)
                nextPassNs = lp_now_ns() + configuration.tickNs
            } else {
                watchPromptedDisplays()
            }
        }
    }

    /// The displays of the watched programs exec'd since the last look, watched now; a launch
    /// whose display was not watched until then is told so (its windows shown before went unseen).
    private func watchPromptedDisplays() {
        guard let prompt else { return }
        for case .execed(let pid, _, _) in prompt.read() {
            if let unseen = displays.watchDisplay(ofProcess: pid) {
                reorder.append(.displayUnwatched(pid: pid, reason: unseen, atNs: lp_now_ns()))
            }
        }
    }

    /// One pass: read, order, assemble, store.
    func pass(final: Bool) throws(MonitorError) {
        let now = lp_now_ns()
        watchPromptedDisplays()
        reorder += source.read()
        reorder += exits.read()
        // Read before the events are taken: an event the displays' threads have yet to hand over
        // is then stamped after `busy`, or after this pass began.
        let busy = displays.busySinceNs
        reorder += displayEvents.take()
        var horizon = final ? UInt64.max : now - min(now, Self.settleNs)
        if !final, let busy { horizon = min(horizon, busy - 1) }
        reorder.sort { $0.atNs < $1.atNs }
        let split = reorder.firstIndex { $0.atNs > horizon } ?? reorder.endIndex
        let ready = Array(reorder[..<split])
        assembler.ingest(ready)
        census?.ingest(ready)
        reorder.removeFirst(split)
        if !final {
            assembler.expire(nowNs: horizon)
            census?.expire(nowNs: horizon)
        }
        metrics.setInFlight(assembler.launchesInFlight)
        // At the stop, launches and unwatched execs still in flight are counted lost.
        try record(assembler.takeFinished(), unfinished: final ? UInt64(assembler.launchesInFlight + (census?.inFlight ?? 0)) : 0)
        if now - lastMaintenanceNs >= Self.maintenanceNs {
            lastMaintenanceNs = now
            try maintain()
        }
    }

    /// Stores finished launches and the losses since the last pass.
    private func record(_ launches: [FieldLaunchAssembler.Launch], unfinished: UInt64) throws(MonitorError) {
        let clocks = Self.clocks()
        let execs = (census?.takeFinished() ?? []).map { record in
            LaunchStore.Exec(
                record: record, marker: censusMarker ?? .unprobed,
                startedAtUnixNs: Int64(bitPattern: record.startNs) &+ clocks.realtimeOffsetNs)
        }
        var rows: [LaunchStore.Launch] = []
        for launch in launches {
            let program = programs[launch.program]
            do throws(LaunchReportError) {
                let run = try launch.run(
                    index: 0, unobservable: program.unobservable, timeoutNs: configuration.launchTimeoutNs, clocks: clocks)
                rows.append(LaunchStore.Launch(
                    program: program.path, buildID: program.buildID, run: run, host: host,
                    startedAtUnixNs: launch.startedAtUnixNs(clocks)))
            } catch {
                say("a launch of \(program.path) (process \(launch.pid)) could not be made a run: \(error)")
            }
        }
        let now = Losses(
            kernel: source.lost + (prompt?.lost ?? 0), malformed: source.malformed + (prompt?.malformed ?? 0),
            exits: exits.overruns, evicted: assembler.counts.evictedProcesses + (census?.evicted ?? 0), launches: assembler.counts.droppedLaunches + unfinished)
        let unixNs = Int64(bitPattern: lp_now_ns()) &+ clocks.realtimeOffsetNs
        let losses = [
            LaunchStore.Loss(source: "kernel", count: now.kernel - reported.kernel, atUnixNs: unixNs),
            LaunchStore.Loss(source: "malformed", count: now.malformed - reported.malformed, atUnixNs: unixNs),
            LaunchStore.Loss(source: "exits", count: now.exits - reported.exits, atUnixNs: unixNs),
            LaunchStore.Loss(source: "processes", count: now.evicted - reported.evicted, atUnixNs: unixNs),
            LaunchStore.Loss(source: "launches", count: now.launches - reported.launches, atUnixNs: unixNs),
        ].filter { $0.count > 0 }
        try store.record(rows, execs: execs, losses: losses)
        for row in rows { metrics.record(program: row.program, run: row.run) }
        for exec in execs { metrics.record(exec: exec) }
        for loss in losses {
            metrics.lost(loss.count, source: loss.source)
            say("\(loss.count) \(Self.lossMeaning(loss.source)); counted in the store and in /metrics")
        }
        reported = now
        recorded += rows.count
        execsRecorded += execs.count
    }

    static func lossMeaning(_ source: String) -> String {
        switch source {
        case "kernel": "kernel events lost: a ring buffer was full"
        case "malformed": "kernel samples did not parse and were dropped"
        case "exits": "times the exit messages overflowed their buffer (an exit each at least)"
        case "processes": "process histories dropped for room (their exits never came)"
        default: "launches (or --all execs) not recorded (too many in flight, or in flight at the stop)"
        }
    }

    /// Retention (and, once a day, the MetricKit payloads of the days before).
    private func maintain() throws(MonitorError) {
        let clocks = Self.clocks()
        let nowUnixNs = Int64(bitPattern: lp_now_ns()) &+ clocks.realtimeOffsetNs
        try store.deleteOlder(than: nowUnixNs - Int64(clamping: configuration.retainNs))
        do {
            try FieldPayloads.writeFinishedDays(store: store, programs: programs.map(\.path), nowUnixNs: nowUnixNs, retainNs: configuration.retainNs)
        } catch {
            say("the MetricKit payloads could not be written: \(error)")
        }
    }

    /// Releases the probes (closing the events), deletes the monitor's tracefs definitions, stops
    /// the endpoint and the displays' threads.
    public func stop() {
        source.close()
        prompt?.close()
        tracefs.removeDefined()
        server?.stop()
        displays.stop()
    }

    /// The wall and boot clocks against CLOCK_MONOTONIC, now.
    static func clocks() -> FieldClocks {
        var monotonic = timespec()
        var realtime = timespec()
        var boottime = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        clock_gettime(CLOCK_REALTIME, &realtime)
        clock_gettime(CLOCK_BOOTTIME, &boottime)
        func ns(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
        return FieldClocks(realtimeOffsetNs: ns(realtime) - ns(monotonic), boottimeOffsetNs: ns(boottime) - ns(monotonic))
    }
}

/// Events handed from other threads (the displays') to the loop.
final class EventQueue: Sendable {
    private let events = Mutex<[FieldEvent]>([])

    func append(_ event: FieldEvent) { events.withLock { $0.append(event) } }

    func take() -> [FieldEvent] {
        events.withLock { events in
            defer { events = [] }
            return events
        }
    }
}
