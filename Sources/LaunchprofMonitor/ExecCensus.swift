import LaunchprofELF

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof monitor --all`: every exec on the machine of a program not watched, as a short
/// record — how long its exec took (from the fork, when the fork was seen), how it ended, and with
/// `--all-main` how long it then took to reach `main` (or, without libc's debug symbols, libc's
/// start-up: the loader's work and the libraries' initializers done, the program's own
/// initializers not yet run). Pure: events in time order go in, records come out.
///
/// Nothing is probed per program: the exec and fork come from the tracepoints every monitor
/// reads, `main` from one uprobe in libc that every glibc process of the machine hits once
/// (`ExecCensus.Marker`). A record ends at that hit, or when the process exits, exec's another
/// program, or `timeoutNs` passes before it (a static or non-glibc program: no `main` seen, said
/// in the record). Memory is bounded by `maximumProcesses`; what overflows is counted.
public struct ExecCensus: Sendable {
    /// What the one libc probe marks.
    public enum Marker: String, Sendable, Equatable {
        /// `__libc_start_call_main` (from libc's detached debug symbols): `main` is called next.
        case main
        /// `__libc_start_main` (exported): the loader is done and the libraries' initializers have
        /// run; the program's own initializers and `main` come next.
        case libcStart = "libc-start"
        /// No probe could be placed (see the monitor's message): execs are recorded, not timed.
        case unprobed = "none"

        /// What a time to this marker runs to, for people.
        public var meaning: String {
            switch self {
            case .main: "main"
            case .libcStart: "libc's start-up (libc's debug symbols absent: the program's own initializers not included)"
            case .unprobed: "main (not measured: --all without --all-main, or no probe in libc could be placed)"
            }
        }
    }

    public struct Record: Sendable, Equatable {
        public enum Outcome: String, Sendable {
            /// The marker was hit.
            case reached
            /// Exited (or was killed) before the marker.
            case exited
            /// Exec'd another program before the marker (a wrapper: `env`, a shell script's `exec`).
            case replaced
            /// Neither the marker nor an exit within the timeout: no glibc start-up seen (or, with
            /// no probe, still running then).
            case notSeen = "not-seen"
        }

        /// The path as the exec named it (possibly relative).
        public var program: String
        public var pid: Int32
        /// The fork (when seen and no exec came between), else the exec; monotonic ns.
        public var startNs: UInt64
        /// Fork to exec done, when the fork was seen.
        public var execNs: UInt64?
        /// Exec done to the marker, when it was hit.
        public var toMarkerNs: UInt64?
        /// Exec done to the exit, for `exited`.
        public var toExitNs: UInt64? = nil
        public var outcome: Outcome
        /// The wait status, for `exited`.
        public var status: Int32?

        public init(
            program: String, pid: Int32, startNs: UInt64, execNs: UInt64?, toMarkerNs: UInt64?, outcome: Outcome, status: Int32?
        ) {
            self.program = program
            self.pid = pid
            self.startNs = startNs
            self.execNs = execNs
            self.toMarkerNs = toMarkerNs
            self.outcome = outcome
            self.status = status
        }

        /// The exec done, monotonic ns.
        var execDoneNs: UInt64 { startNs + (execNs ?? 0) }
    }

    public var timeoutNs: UInt64
    public var maximumProcesses: Int
    /// Processes dropped for room (their exits never came) and execs lost with them.
    public private(set) var evicted: UInt64 = 0

    /// Is this exec'd path a watched program's (recorded as a launch instead)?
    private let isWatched: @Sendable (String) -> Bool
    private var processes: [Int32: ProcessState] = [:]
    private var finished: [Record] = []
    private var nowNs: UInt64 = 0

    private struct ProcessState {
        /// The fork, until the first exec after it.
        var forkNs: UInt64?
        var open: Record?
        var lastNs: UInt64
    }

    public init(
        timeoutNs: UInt64 = 60_000_000_000, maximumProcesses: Int = 65_536, isWatched: @escaping @Sendable (String) -> Bool
    ) {
        self.timeoutNs = timeoutNs
        self.maximumProcesses = maximumProcesses
        self.isWatched = isWatched
    }

    /// Records begun and not yet finished (lost when the monitor stops: counted as such).
    public var inFlight: Int { processes.values.reduce(0) { $0 + ($1.open == nil ? 0 : 1) } }

    /// The records finished so far.
    public mutating func takeFinished() -> [Record] {
        defer { finished = [] }
        return finished
    }

    public mutating func ingest(_ events: [FieldEvent]) {
        for event in events { ingest(event) }
    }

    public mutating func ingest(_ event: FieldEvent) {
        nowNs = max(nowNs, event.atNs)
        switch event {
        case .forked(_, let child, let at):
            close(child, outcome: .exited, status: nil, atNs: at)  // a reused pid: its exit was lost
            room()
            processes[child] = ProcessState(forkNs: at, lastNs: at)
        case .execed(let pid, let filename, let at):
            close(pid, outcome: .replaced, status: nil, atNs: at)
            if processes[pid] == nil {
                room()
                processes[pid] = ProcessState(lastNs: at)
            }
            guard var state = processes[pid] else { return }
            if !isWatched(filename) {
                let start = state.forkNs ?? at
                state.open = Record(
                    program: filename, pid: pid, startNs: start, execNs: state.forkNs.map { at - min(at, $0) },
                    toMarkerNs: nil, outcome: .reached, status: nil)
            }
            state.forkNs = nil
            state.lastNs = at
            processes[pid] = state
        case .libcStarted(let pid, let at):
            guard var state = processes[pid], var record = state.open else { return }
            let exec = record.execDoneNs
            record.toMarkerNs = at - min(at, exec)
            finished.append(record)
            state.open = nil
            state.lastNs = at
            processes[pid] = state
        case .exited(let pid, let status, let at):
            close(pid, outcome: .exited, status: status, atNs: at)
            processes[pid] = nil
        case .stopped, .continued, .boundary, .hook, .display, .displayUnwatched:
            break
        }
    }

    /// Records whose marker did not come within the timeout end as `notSeen`; processes quiet for
    /// that long with nothing open are forgotten (a long-running process keeps no state).
    public mutating func expire(nowNs: UInt64) {
        self.nowNs = max(self.nowNs, nowNs)
        for (pid, state) in processes where self.nowNs - min(self.nowNs, state.lastNs) >= timeoutNs {
            if state.open != nil { close(pid, outcome: .notSeen, status: nil, atNs: self.nowNs) }
            processes[pid] = nil
        }
    }

    private mutating func close(_ pid: Int32, outcome: Record.Outcome, status: Int32?, atNs: UInt64) {
        guard var record = processes[pid]?.open else { return }
        record.outcome = outcome
        record.status = status
        if outcome == .exited, status != nil { record.toExitNs = atNs - min(atNs, record.execDoneNs) }
        finished.append(record)
        processes[pid]?.open = nil
    }

    /// Makes room for one more process: the one quiet longest goes (its record, if any, lost).
    private mutating func room() {
        guard processes.count >= maximumProcesses, let oldest = processes.min(by: { $0.value.lastNs < $1.value.lastNs }) else { return }
        processes[oldest.key] = nil
        evicted += 1
    }
}

extension ExecCensus {
    /// Where `--all`'s one probe goes: libc's file and offset, and what a hit there marks.
    public struct Probe: Sendable, Equatable {
        public var path: String
        public var offset: UInt64
        public var marker: Marker
    }

    /// The system's libc (as the loader cache names it, else the default directories) and its
    /// marker: `__libc_start_call_main` where libc's detached debug symbols name it (glibc ≥ 2.34
    /// calls `main` from it), else the exported `__libc_start_main`. nil, with the reason, when
    /// neither is found.
    public static func plan(debugRoot: String = "/usr/lib/debug") -> (probe: Probe?, reason: String?) {
        // The libc a dynamic program of this system loads (the shell's), resolved as the loader would.
        guard let shell = try? ELFImage.read(path: "/bin/sh"),
            let entry: ELFImage = DependencyResolver.system().resolve(program: shell, environment: [:]).objects
                .first(where: { WatchedProgram.fileName($0.path) == "libc.so.6" })
        else {
            return (nil, "no libc.so.6 in /bin/sh's libraries")
        }
        let path = entry.path
        let libc = entry
        // Its local symbols (a detached debug file's .symtab: ObjectSymbols reads those).
        if let symbols = try? ObjectSymbols.load(path: path, debugRoot: debugRoot), symbols.source != .dynsym,
            let function = symbols.functions.first(where: { $0.name == "__libc_start_call_main" }),
            let offset = WatchedProgram.placedOffset(libc, address: function.start)
        {
            return (Probe(path: path, offset: offset, marker: .main), nil)
        }
        guard let address = libc.symbolAddress("__libc_start_main"), let offset = WatchedProgram.placedOffset(libc, address: address) else {
            return (nil, "\(path) exports no __libc_start_main")
        }
        return (Probe(path: path, offset: offset, marker: .libcStart), nil)
    }
}
