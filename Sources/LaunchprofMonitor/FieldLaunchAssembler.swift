import LaunchprofReport
import LaunchprofTracing

/// Turns the machine's process events into launches of the watched programs. Pure: events in
/// time order go in, finished launches come out, and the same events give the same launches.
///
/// Every process gets a short history from its fork: the images it exec'd, and the loader and
/// hook hits since its last exec. A launch begins when a probe in a watched program's own file
/// fires in a process (only that program runs its own code): the history up to then becomes the
/// launch's first events, so the fork is its spawn and an exec chain (`env app`, a wrapper
/// script) is in it as in `launchprof run`. A process that never reaches its program's code (a
/// library missing) is still a launch if an exec of the program's file name ended it.
///
/// Start types: a watched process forked from a running instance without an exec is a candidate
/// that becomes a `forked` launch when it shows a window or calls a hook; a launch stopped before
/// its first frame and continued is `resumed`; a cold launch that ends without a frame of its own
/// while another instance runs handed over to it (`broughtToFront`).
///
/// A launch ends at its first frame (the first-frame hook, else a window's first content) once no
/// extended-launch task is open, at its process's exit, or when `timeoutNs` passes without
/// either (time stopped does not count). Memory is bounded: `maximumProcesses` histories and
/// `maximumLaunches` launches in flight; what overflows is counted in `dropped`.
public struct FieldLaunchAssembler: Sendable {
    /// A launch assembled: its program (index among the watched), its process, how it started
    /// and its events for `PhaseTimeline`.
    public struct Launch: Sendable, Equatable {
        public var program: Int
        public var pid: Int32
        public var startType: FieldLaunchFacts.StartType
        public var events: [LaunchEvent]
        public var spawnNs: UInt64
        /// The timeout passed before a first frame or the exit.
        public var timedOut: Bool
        /// `resumed`: when the process ran again (absolute monotonic ns).
        public var resumedAtNs: UInt64?
        /// Why its windows may have gone unseen (its display was not watched at its exec), when
        /// no window of it was seen after all: then its clean exit is no first frame.
        public var unwatchedDisplay: String? = nil
    }

    public struct Counts: Sendable, Equatable {
        /// Histories evicted for room (a process whose exit was never seen) and launches that
        /// found no room.
        public var evictedProcesses: UInt64 = 0
        public var droppedLaunches: UInt64 = 0

        public init() {}
    }

    public var timeoutNs: UInt64
    public var maximumProcesses: Int
    public var maximumLaunches: Int
    public private(set) var counts = Counts()

    /// The programs watched: index → the file names an exec of each can have.
    private let fileNames: [Set<String>]
    /// Index → the absolute paths known to name each (as given, and resolved); empty: unknown.
    private let paths: [Set<String>]
    private var processes: [Int32: ProcessState] = [:]
    private var launchCount = 0
    /// Per program, its processes with a launch in flight or running on after one.
    private var instances: [Int: Int] = [:]
    /// Time of the last event ingested: what timeouts are measured against.
    private var nowNs: UInt64 = 0
    private var finished: [Launch] = []

    /// Hits kept from a process's last exec until it is known to run a watched program.
    static let maximumPending = 64
    /// Images kept per process (an exec chain longer than this keeps its last ones).
    static let maximumImages = 8

    private struct ProcessState {
        var parent: Int32?
        var forkNs: UInt64?
        var images: [(path: String, atNs: UInt64)] = []
        /// Loader and hook hits since the last exec, before the process is known to be watched.
        var pending: [FieldEvent] = []
        /// The watched program this process runs (known from a probe in its own file, or
        /// inherited through a fork).
        var program: Int?
        /// The launch in flight.
        var launch: LaunchState?
        /// Its launch is over and it goes on running: an instance of `program`.
        var running = false
        /// Forked from a running instance, no exec since: a `forked` launch if it shows a frame.
        var forkCandidate = false
        var stoppedAtNs: UInt64?
        var lastNs: UInt64 = 0
        /// Counted in `instances` (under `program`).
        var counted = false
    }

    private struct LaunchState {
        var program: Int
        var startType: FieldLaunchFacts.StartType
        var spawnNs: UInt64
        var events: [LaunchEvent]
        var recorder = BoundaryRecorder()
        var openTasks: Set<String> = []
        var firstFrameNs: UInt64?
        /// When the timeout ends, or nil while the process is stopped.
        var deadlineNs: UInt64?
        var resumedAtNs: UInt64?
        var unwatchedDisplay: String?
    }

    public init(
        programs: [WatchedProgram], timeoutNs: UInt64 = 60_000_000_000, maximumProcesses: Int = 65_536,
        maximumLaunches: Int = 4096
    ) {
        self.init(
            fileNames: programs.map(\.fileNames), paths: programs.map { Set([$0.givenPath, $0.path].filter { $0.hasPrefix("/") }) },
            timeoutNs: timeoutNs, maximumProcesses: maximumProcesses, maximumLaunches: maximumLaunches)
    }

    /// For tests: programs by their file names (and absolute paths, when given).
    public init(
        fileNames: [Set<String>], paths: [Set<String>]? = nil, timeoutNs: UInt64, maximumProcesses: Int = 65_536,
        maximumLaunches: Int = 4096
    ) {
        self.fileNames = fileNames
        self.paths = paths ?? fileNames.map { _ in [] }
        self.timeoutNs = timeoutNs
        self.maximumProcesses = maximumProcesses
        self.maximumLaunches = maximumLaunches
    }

    /// Processes of a watched program already running when the monitor starts: later launches
    /// can hand over to them, and their forks can be launches.
    public mutating func running(pid: Int32, program: Int) {
        var state = ProcessState()
        state.program = program
        state.running = true
        processes[pid] = state
        countInstance(pid)
    }

    /// The launches in flight.
    public var launchesInFlight: Int { launchCount }

    /// Takes the launches finished so far.
    public mutating func takeFinished() -> [Launch] {
        defer { finished = [] }
        return finished
    }

    /// Ingests events, oldest first.
    public mutating func ingest(_ events: [FieldEvent]) {
        for event in events { ingest(event) }
    }

    public mutating func ingest(_ event: FieldEvent) {
        nowNs = max(nowNs, event.atNs)
        switch event {
        case .forked(let parent, let child, let at): forked(parent: parent, child: child, atNs: at)
        case .execed(let pid, let filename, let at): execed(pid: pid, filename: filename, atNs: at)
        case .exited(let pid, let status, let at): exited(pid: pid, status: status, atNs: at)
        case .stopped(let pid, let at): stopped(pid: pid, atNs: at)
        case .continued(let pid, let at): continued(pid: pid, atNs: at)
        case .boundary(let pid, let program, let boundaries, let at):
            boundary(pid: pid, program: program, boundaries: boundaries, atNs: at, event: event)
        case .hook(let pid, let hook): hooked(pid: pid, hook, event: event)
        case .display(let pid, let display): displayed(pid: pid, display)
        case .displayUnwatched(let pid, let reason, _): displayUnwatched(pid: pid, reason: reason, event: event)
        case .libcStarted: break  // `--all`'s marker: ExecCensus's, not a watched launch's boundary
        }
    }

    /// Ends the launches whose timeout passed by `nowNs` (the monitor's clock, when no event came).
    public mutating func expire(nowNs now: UInt64) {
        nowNs = max(nowNs, now)
        for (pid, state) in processes {
            guard let launch = state.launch, let deadline = launch.deadlineNs, deadline <= nowNs else { continue }
            finish(pid: pid, timedOut: true)
        }
    }

    // MARK: Process events

    private mutating func forked(parent: Int32, child: Int32, atNs: UInt64) {
        var state = ProcessState()
        state.parent = parent
        state.forkNs = atNs
        state.lastNs = atNs
        if let parentState = processes[parent], let program = parentState.program {
            // A copy of a watched process runs the same program until it execs.
            state.program = program
            state.forkCandidate = parentState.running
        }
        store(child, state)
    }

    private mutating func execed(pid: Int32, filename: String, atNs: UInt64) {
        var state = processes[pid] ?? ProcessState()
        if state.launch != nil {
            // The watched program exec'd something else: its launch ends as its image does.
            finish(pid: pid, timedOut: false, endedByExec: true)
            state = processes[pid] ?? ProcessState()
        }
        if state.running {
            // An instance that execs is no longer one.
            uncountInstance(pid)
            state = ProcessState(parent: state.parent, forkNs: nil)
        }
        state.images.append((filename, atNs))
        if state.images.count > Self.maximumImages { state.images.removeFirst() }
        state.pending = []
        state.program = nil
        state.forkCandidate = false
        state.lastNs = atNs
        store(pid, state)
    }

    private mutating func exited(pid: Int32, status: Int32, atNs: UInt64) {
        guard var state = processes[pid] else { return }
        if state.launch == nil, state.program == nil, Self.failedBeforeProgram(status), let image = state.images.last,
            let program = programNamed(image.path)
        {
            // It never ran its program's code, yet it exec'd a file of that name and failed the
            // way a launch fails before it (a library missing: the loader exits 127; a library's
            // constructor crashed). An absolute path must be one the program is known by (another
            // `true` killed elsewhere on the machine is no failed launch of a watched copy); a
            // relative one is told by its name alone.
            state.program = program
            processes[pid] = state
            begin(pid: pid, program: program, startType: .cold)
            state = processes[pid]!
        }
        if state.launch != nil {
            processes[pid]?.launch?.events.append(.exited(Self.exitStatus(status), atNs: atNs))
            finish(pid: pid, timedOut: false, exitedAtNs: atNs)
        }
        uncountInstance(pid)
        processes[pid] = nil
    }

    private mutating func stopped(pid: Int32, atNs: UInt64) {
        guard processes[pid] != nil else { return }
        processes[pid]?.stoppedAtNs = atNs
        if processes[pid]?.launch != nil { processes[pid]?.launch?.deadlineNs = nil }
    }

    private mutating func continued(pid: Int32, atNs: UInt64) {
        guard let state = processes[pid], state.stoppedAtNs != nil else { return }
        processes[pid]?.stoppedAtNs = nil
        if var launch = state.launch {
            // Stopped before its first frame and let run again: the launch resumed from a freeze.
            if launch.firstFrameNs == nil {
                launch.startType = .resumed
                launch.resumedAtNs = atNs
            }
            launch.deadlineNs = atNs + timeoutNs
            processes[pid]?.launch = launch
        }
    }

    // MARK: Probe and display events

    private mutating func boundary(pid: Int32, program: Int?, boundaries: [Boundary], atNs: UInt64, event: FieldEvent) {
        var state = processes[pid] ?? ProcessState()
        if state.launch == nil {
            guard let program, !state.running, !state.forkCandidate else {
                // A loader hit in a process not (yet) known to be watched: kept until it is.
                if !state.running, state.pending.count < Self.maximumPending { state.pending.append(event) }
                state.lastNs = atNs
                store(pid, state)
                return
            }
            // Its own program's code ran: a cold launch of it, from its history.
            state.program = program
            store(pid, state)
            begin(pid: pid, program: program, startType: .cold)
            guard processes[pid]?.launch != nil else { return }
        }
        guard var launch = processes[pid]?.launch else { return }
        launch.events += launch.recorder.hit(boundaries, atNs: atNs)
        processes[pid]?.launch = launch
        processes[pid]?.lastNs = atNs
    }

    private mutating func hooked(pid: Int32, _ hook: HookEvent, event: FieldEvent) {
        guard var state = processes[pid] else { return }
        if state.launch == nil {
            if state.forkCandidate, hook.kind == .begin || hook.kind == .firstFrame || hook.kind == .extend {
                begin(pid: pid, program: state.program!, startType: .forked)
            } else {
                if !state.running, state.program == nil, state.pending.count < Self.maximumPending {
                    state.pending.append(event)
                    processes[pid] = state
                }
                return
            }
        }
        apply(hook, to: pid)
    }

    private mutating func displayed(pid: Int32, _ display: DisplayEvent) {
        guard let state = processes[pid] else { return }
        if state.launch == nil {
            guard state.forkCandidate else { return }
            begin(pid: pid, program: state.program!, startType: .forked)
        }
        guard var launch = processes[pid]?.launch else { return }
        launch.events.append(.display(display))
        if display.kind == .firstFrame, launch.firstFrameNs == nil { launch.firstFrameNs = display.atNs }
        processes[pid]?.launch = launch
        finishIfReady(pid: pid)
    }

    private mutating func displayUnwatched(pid: Int32, reason: String, event: FieldEvent) {
        guard var state = processes[pid] else { return }
        if var launch = state.launch {
            launch.unwatchedDisplay = launch.unwatchedDisplay ?? reason
            state.launch = launch
        } else if !state.running, state.pending.count < Self.maximumPending {
            state.pending.append(event)  // before its entry: kept for the launch it begins
        }
        processes[pid] = state
    }

    private mutating func apply(_ hook: HookEvent, to pid: Int32) {
        guard var launch = processes[pid]?.launch else { return }
        launch.events.append(.hook(hook))
        switch hook.kind {
        case .firstFrame: if launch.firstFrameNs == nil { launch.firstFrameNs = hook.atNs }
        case .extend: launch.openTasks.insert(hook.name)
        case .finishExtend: launch.openTasks.remove(hook.name)
        case .begin, .end: break
        }
        processes[pid]?.launch = launch
        finishIfReady(pid: pid)
    }

    // MARK: Launches

    /// Starts the launch of `program` in `pid` from the process's history.
    private mutating func begin(pid: Int32, program: Int, startType: FieldLaunchFacts.StartType) {
        guard var state = processes[pid] else { return }
        guard launchCount < maximumLaunches else {
            counts.droppedLaunches += 1
            state.running = true  // not a launch we can follow: its later events are ignored
            processes[pid] = state
            return
        }
        var events: [LaunchEvent] = []
        let spawn: UInt64
        if startType == .forked {
            spawn = state.forkNs ?? nowNs
            events.append(.spawned(atNs: spawn))
            events.append(.unobservable(phase: LaunchPhase.exec, reason: "forked from a running instance: no exec"))
            events.append(.unobservable(phase: "main", reason: "forked from a running instance, past its main"))
        } else if let fork = state.forkNs, !state.images.isEmpty {
            spawn = fork
            events.append(.spawned(atNs: fork))
            for (index, image) in state.images.enumerated() {
                events.append(.imageStarted(image: index, path: image.path, atNs: image.atNs))
            }
        } else {
            // Created before the monitor saw it: the launch starts at its exec, its exec unseen.
            spawn = state.images.last?.atNs ?? nowNs
            events.append(.spawned(atNs: spawn))
            events.append(.unobservable(phase: LaunchPhase.exec, reason: "the process was created before the monitor started"))
            if let image = state.images.last { events.append(.imageStarted(image: 0, path: image.path, atNs: image.atNs)) }
        }
        var launch = LaunchState(program: program, startType: startType, spawnNs: spawn, events: events)
        launch.deadlineNs = state.stoppedAtNs == nil ? spawn + timeoutNs : nil
        state.launch = launch
        state.forkCandidate = false
        let pending = state.pending
        state.pending = []
        processes[pid] = state
        countInstance(pid)
        launchCount += 1
        for event in pending {
            switch event {
            case .boundary(_, _, let boundaries, let at):
                guard var launch = processes[pid]?.launch else { continue }
                launch.events += launch.recorder.hit(boundaries, atNs: at)
                processes[pid]?.launch = launch
            case .hook(_, let hook): apply(hook, to: pid)
            case .displayUnwatched(_, let reason, _): processes[pid]?.launch?.unwatchedDisplay = reason
            default: break
            }
        }
    }

    /// Ends the launch once its first frame is known and no extended task is open.
    private mutating func finishIfReady(pid: Int32) {
        guard let launch = processes[pid]?.launch, launch.firstFrameNs != nil, launch.openTasks.isEmpty else { return }
        finish(pid: pid, timedOut: false)
    }

    private mutating func finish(pid: Int32, timedOut: Bool, exitedAtNs: UInt64? = nil, endedByExec: Bool = false) {
        guard let state = processes[pid], let launch = state.launch else { return }
        var startType = launch.startType
        if startType == .cold, exitedAtNs != nil, launch.firstFrameNs == nil, !hasOwnFrame(launch),
            let exit = launch.events.last, case .exited(.exited(code: 0), _) = exit, instances[launch.program, default: 0] > 1
        {
            // Ended cleanly, no frame of its own, while another instance runs: it handed over.
            startType = .broughtToFront
        }
        finished.append(Launch(
            program: launch.program, pid: pid, startType: startType, events: launch.events, spawnNs: launch.spawnNs,
            timedOut: timedOut, resumedAtNs: launch.resumedAtNs,
            unwatchedDisplay: hasOwnFrame(launch) ? nil : launch.unwatchedDisplay))
        launchCount -= 1
        processes[pid]?.launch = nil
        processes[pid]?.running = !endedByExec
        if endedByExec { uncountInstance(pid) }
    }

    private mutating func countInstance(_ pid: Int32) {
        guard let state = processes[pid], !state.counted, let program = state.program else { return }
        processes[pid]?.counted = true
        instances[program, default: 0] += 1
    }

    private mutating func uncountInstance(_ pid: Int32) {
        guard let state = processes[pid], state.counted, let program = state.program else { return }
        processes[pid]?.counted = false
        instances[program, default: 1] -= 1
    }

    /// A status a launch ends with when it fails before the program's own code: the loader's
    /// 127, or a signal.
    static func failedBeforeProgram(_ status: Int32) -> Bool {
        status & 0x7f != 0 || (status >> 8) & 0xff == 127
    }

    private func hasOwnFrame(_ launch: LaunchState) -> Bool {
        launch.events.contains { if case .display = $0 { true } else { false } }
    }

    private func programNamed(_ path: String) -> Int? {
        let name = WatchedProgram.fileName(path)
        guard let index = fileNames.firstIndex(where: { $0.contains(name) }) else { return nil }
        if path.hasPrefix("/"), !paths[index].isEmpty, !paths[index].contains(path) { return nil }
        return index
    }

    /// Keeps `state` for `pid`, making room by evicting the longest-quiet histories that have no
    /// launch in flight.
    private mutating func store(_ pid: Int32, _ state: ProcessState) {
        if processes[pid] == nil, processes.count >= maximumProcesses {
            let evictable = processes.filter { $0.value.launch == nil }.sorted { $0.value.lastNs < $1.value.lastNs }
            for (victim, _) in evictable.prefix(max(1, maximumProcesses / 16)) {
                uncountInstance(victim)
                processes[victim] = nil
                counts.evictedProcesses += 1
            }
            if processes.count >= maximumProcesses { return }
        }
        processes[pid] = state
    }

    /// A wait status (`exit` code in bits 8–15, else the signal and the core-dump bit).
    static func exitStatus(_ status: Int32) -> ExitStatus {
        let signal = status & 0x7f
        if signal == 0 { return .exited(code: (status >> 8) & 0xff) }
        return .signaled(signal: signal, coreDumped: status & 0x80 != 0)
    }
}
