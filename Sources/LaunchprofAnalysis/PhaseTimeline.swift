import LaunchprofReport

/// The phases, metrics, absent phases and warnings of one launch, derived from the events the
/// tracer and the app's hooks produced for it. Pure: the same events give the same timeline.
///
/// Rules (times are ns from `spawned`; instants have `durationNs == 0`):
/// - `exec`: spawned → the first instruction of image 0. For an exec chain, each later image k
///   gets an instant `exec` (image k) where it starts: the `execve` call inside image k-1 is not
///   observed, so its duration is not claimed.
/// - `loader.map`: image start → relocationStarted; `loader.relocate`: relocationStarted →
///   relocationFinished.
/// - `loader.init`: one per objectInitStarted, with `object`; it ends at the next
///   objectInitStarted, entryReached or mainReached of the same image, else where the next image
///   starts, else at the exit (a constructor that crashed or exited ends there).
/// - `program.start`: entryReached → programInitStarted: libc's start-up before the program's
///   initializers (a static program relocates itself and sets up TLS here; the tracer observes
///   the entry of a dynamic program only when it has no initializer).
/// - `program.init`: programInitStarted → mainReached, the program's preinit/init/init_array.
///   Without programInitStarted (no initializer to observe) it spans entryReached → mainReached
///   and so includes libc's start-up.
/// - `main`: instant. `timeToMainNs` is the `main` of the last image that reached `main` (the
///   program the user ends up running, e.g. rustup's proxy exec'ing rustc).
/// - App phases: `begin`/`end` hook pairs matched by name (nested pairs of one name match
///   innermost first), `source: hook`; `extendedLaunch`: `extend` → `finish-extend`, with `task`.
/// - Runtime phases (`probed` spans, rules in `RuntimeRecorder`): `dlopen` and its steps, a
///   toolkit's `willFinishLaunching`/`didFinishLaunching` (unless the app's hooks report that
///   phase), `gtk_init`, `python.startup`, `import`, each with its `source` and, off the main
///   thread, its `thread`.
/// - `windowMapped`: instant at the first top-level window of the program the display server
///   showed. `firstFrame`: the instant `ReadinessPolicy.firstFrame` chooses (the app's
///   `first-frame` hook, else the event the readiness names, else a clean exit where allowed).
/// - `exit`: instant, with the exit status.
/// - Events after `imageStarted(image: k)` belong to image k; hook events, which carry the app's
///   own clock, belong to the image running at their timestamp. Phases of images ≥ 1 carry
///   `image`.
/// A phase whose boundary is missing is listed in `absent` with a reason (the tracer's
/// `unobservable` reason when it gave one), never estimated.
public struct PhaseTimeline: Sendable, Equatable {
    /// Phases ordered by start, ties in launch order.
    public var phases: [LaunchPhase]
    public var metrics: LaunchMetrics
    public var absent: [AbsentPhase]
    public var warnings: [TimelineWarning]
    /// How the child ended; nil when the events end before its exit.
    public var exitStatus: ExitStatus?
    /// The `spawned` timestamp every time in the timeline is relative to (absolute monotonic ns).
    public var spawnedAtNs: UInt64
    /// The process exited inside the dynamic loader: its first image started, the loader's
    /// relocation was observable but never finished, and nothing of the program ran (a missing
    /// library or symbol: the loader prints which and exits 127).
    public var exitedInLoader = false

    /// How the reason of a span absent for hits lost inside it begins.
    public static let endMayHaveBeenLost = "its end may have been lost"

    /// MetricKit's limits on extended-launch tasks.
    public static let maximumExtendedTasks = 16
    public static let maximumTaskIDLength = 128

    /// Builds the timeline of one run.
    /// - Parameters:
    ///   - events: the run's events in the order the tracer observed them.
    ///   - readiness: decides whether the exit stands in for a first frame the app never sent.
    public init(events: [LaunchEvent], readiness: ReadinessPolicy = .automatic)
        throws(LaunchReportError)
    {
        var spawn: UInt64?
        for case .spawned(let atNs) in events {
            spawn = atNs
            break
        }
        guard let spawn else { throw .missingSpawn(eventCount: events.count) }
        var builder = TimelineBuilder(spawnNs: spawn, readiness: readiness)
        builder.collect(events)
        builder.warnAboutLateEvents()
        builder.buildImagePhases()
        builder.buildHookPhases()
        builder.buildProbedPhases()
        builder.buildExit()
        builder.applyUnobservable()
        self = builder.finish()
        exitedInLoader = builder.exitedInLoader
    }

    init(
        phases: [LaunchPhase], metrics: LaunchMetrics, absent: [AbsentPhase],
        warnings: [TimelineWarning], exitStatus: ExitStatus?, spawnedAtNs: UInt64
    ) {
        self.phases = phases
        self.metrics = metrics
        self.absent = absent
        self.warnings = warnings
        self.exitStatus = exitStatus
        self.spawnedAtNs = spawnedAtNs
    }
}

/// The events of one image of an exec chain, in observation order.
private struct ImageSegment {
    var index: Int
    /// Absolute ns of the image's first instruction; nil when events arrived before any
    /// `imageStarted` (the tracer saw no exec).
    var startNs: UInt64?
    var boundaries: [LaunchEvent] = []
    var unobservable: [(phase: String, reason: String)] = []
}

/// Accumulates a timeline; split from `PhaseTimeline` so each rule reads as one method.
private struct TimelineBuilder {
    let spawnNs: UInt64
    let readiness: ReadinessPolicy
    var segments: [ImageSegment] = []
    var hooks: [HookEvent] = []
    var probed: [ProbedSpan] = []
    var ready: (reason: String, atNs: UInt64)?
    var windowMapped: DisplayEvent?
    var displayFrame: DisplayEvent?
    var exit: (status: ExitStatus, atNs: UInt64)?
    /// When (and why) launchprof decided to end the child; nothing later is collected.
    var ended: (reason: String, atNs: UInt64)?
    /// Events stamped after `ended`, left out: how many, and the first one's name and time.
    var lateEvents: (count: Int, first: String, atNs: UInt64)?
    /// When probe hits were dropped (`hitsLost`): a boundary hit may be missing there.
    var losses: [(count: UInt64, fromNs: UInt64, toNs: UInt64)] = []

    var phases: [LaunchPhase] = []
    var absent: [AbsentPhase] = []
    var warnings: [TimelineWarning] = []
    var metrics = LaunchMetrics()

    init(spawnNs: UInt64, readiness: ReadinessPolicy) {
        self.spawnNs = spawnNs
        self.readiness = readiness
    }

    // MARK: Collecting

    mutating func collect(_ events: [LaunchEvent]) {
        for case .endedByLaunchprof(let reason, let atNs) in events {
            ended = (reason, atNs)
            break
        }
        for event in events {
            // A loss that ended late may still have begun inside the launch.
            if case .hitsLost(let count, let fromNs, let toNs) = event {
                losses.append((count, fromNs, toNs))
                continue
            }
            // What the child did after launchprof decided to end it is not part of its launch.
            if let ended, let time = event.timeNs, time > ended.atNs {
                if case .exited = event {} else {
                    lateEvents = lateEvents.map { ($0.count + 1, $0.first, $0.atNs) } ?? (1, Self.name(of: event), time)
                    continue
                }
            }
            switch event {
            case .spawned, .endedByLaunchprof, .hitsLost:
                continue
            case .imageStarted(let image, _, let atNs):
                segments.append(ImageSegment(index: image, startNs: atNs))
            case .relocationStarted, .relocationFinished, .objectInitStarted, .entryReached,
                .programInitStarted, .mainReached:
                ensureSegment()
                segments[segments.count - 1].boundaries.append(event)
            case .unobservable(let phase, let reason):
                ensureSegment()
                segments[segments.count - 1].unobservable.append((phase, reason))
            case .hook(let hook):
                hooks.append(hook)
            case .probed(let span):
                probed.append(span)
            case .ready(let reason, let atNs):
                if ready == nil { ready = (reason, atNs) }
            case .display(let event):
                switch event.kind {
                case .windowMapped: if windowMapped == nil { windowMapped = event }
                case .firstFrame: if displayFrame == nil { displayFrame = event }
                }
            case .exited(let status, let atNs):
                if exit == nil { exit = (status, atNs) }
            }
        }
        // Hooks come from several app threads through one socket: order them by the app's clock.
        hooks = hooks.enumerated().sorted {
            ($0.element.atNs, $0.offset) < ($1.element.atNs, $1.offset)
        }.map(\.element)
    }

    /// What a left-out event was, for the warning that says so.
    static func name(of event: LaunchEvent) -> String {
        switch event {
        case .display(let display): display.kind == .firstFrame ? "a first frame on the display" : "a window shown"
        case .hook(let hook): "the hook '\(hook.kind.rawValue)\(hook.name.isEmpty ? "" : " \(hook.name)")'"
        case .ready(let reason, _): "readiness (\(reason))"
        case .imageStarted: "an exec"
        default: "a launch boundary"
        }
    }

    /// Says which events `collect` left out for coming after launchprof ended the child.
    mutating func warnAboutLateEvents() {
        guard let late = lateEvents, let ended else { return }
        let others = late.count > 1 ? " and \(late.count - 1) later event(s)" : ""
        warn(
            .eventsAfterEnd,
            "\(late.first) at \(offset(late.atNs)) ns\(others) came after launchprof ended the process at "
                + "\(offset(ended.atNs)) ns (\(ended.reason)): not part of the launch, left out")
    }

    private mutating func ensureSegment() {
        if segments.isEmpty { segments.append(ImageSegment(index: 0, startNs: nil)) }
    }

    // MARK: Time helpers

    /// ns from the spawn; an event stamped before the spawn is clamped to 0 with a warning.
    mutating func relative(_ atNs: UInt64) -> UInt64 {
        if atNs < spawnNs {
            warn(.timeOutOfOrder, "An event stamped \(spawnNs - atNs) ns before the spawn was moved to 0.")
        }
        return offset(atNs)
    }

    /// ns from the spawn, clamped to 0, for a time already placed (and warned about) as a phase.
    func offset(_ atNs: UInt64) -> UInt64 {
        atNs >= spawnNs ? atNs - spawnNs : 0
    }

    mutating func addSpan(
        _ name: String, from start: UInt64, to end: UInt64, object: String? = nil,
        task: String? = nil, image: Int?, source: String? = nil, thread: Int32? = nil, caller: String? = nil
    ) {
        guard end >= start else {
            warn(.timeOutOfOrder, "Phase '\(name)' ends \(start - end) ns before it starts.")
            markAbsent(name, "it ends before it starts (clock mismatch)", image: image)
            return
        }
        let startNs = relative(start)
        var phase = LaunchPhase(
            name: name, startNs: startNs, durationNs: end - start, object: object, task: task, image: image)
        phase.source = source
        phase.thread = thread
        phase.caller = caller
        phases.append(phase)
    }

    mutating func addInstant(_ name: String, at atNs: UInt64, image: Int?) {
        phases.append(LaunchPhase(name: name, startNs: relative(atNs), durationNs: 0, image: image))
    }

    mutating func warn(_ code: TimelineWarning.Code, _ message: String) {
        warnings.append(TimelineWarning(code, message))
    }

    mutating func markAbsent(_ phase: String, _ reason: String, image: Int?) {
        let entry = AbsentPhase(phase: phase, reason: reason, image: image)
        if !absent.contains(entry) { absent.append(entry) }
    }

    /// The image (nil for 0) running at an absolute time, for events stamped by the app.
    func image(at atNs: UInt64) -> Int? {
        var found = segments.first?.index ?? 0
        for segment in segments {
            if let start = segment.startNs, start <= atNs { found = segment.index }
        }
        return found == 0 ? nil : found
    }

    static func imageField(_ index: Int) -> Int? { index == 0 ? nil : index }

    func exitDescription(_ status: ExitStatus) -> String {
        switch status {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal, _): "was killed by signal \(signal) (\(RunOutcome.signalName(signal)))"
        case .killedByLaunchprof(_, let reason): "was ended by launchprof (\(reason))"
        case .exitedWhenEnded(let code, let reason): "exited with status \(code) when launchprof ended it (\(reason))"
        }
    }

    /// Why a boundary of segment `position` was never seen: what ended the image first.
    func missingReason(_ boundary: String, segmentAt position: Int) -> String {
        if position + 1 < segments.count {
            let next = segments[position + 1].index
            return "image \(segments[position].index) exec'd image \(next) before \(boundary)"
        }
        if let exit { return "the process \(exitDescription(exit.status)) before \(boundary)" }
        return "\(boundary) was not observed"
    }

    /// See `PhaseTimeline.exitedInLoader`.
    var exitedInLoader: Bool {
        guard exit != nil, segments.count == 1, let segment = segments.first, segment.startNs != nil else { return false }
        let loaderPhases = [LaunchPhase.loaderMap, LaunchPhase.loaderRelocate]
        if segment.unobservable.contains(where: { loaderPhases.contains($0.phase) }) { return false }
        return !segment.boundaries.contains { event in
            switch event {
            case .relocationFinished, .objectInitStarted, .entryReached, .programInitStarted, .mainReached: true
            default: false
            }
        }
    }

    // MARK: Loader and program phases

    mutating func buildImagePhases() {
        if segments.isEmpty {
            let reason =
                exit.map { "the process \(exitDescription($0.status)) before its first instruction" }
                ?? "the program's first instruction was not observed"
            markAbsent(LaunchPhase.exec, reason, image: nil)
            markAbsent(LaunchPhase.main, reason, image: nil)
            return
        }
        for position in segments.indices {
            buildPhases(ofSegmentAt: position)
        }
    }

    private mutating func buildPhases(ofSegmentAt position: Int) {
        let segment = segments[position]
        let image = Self.imageField(segment.index)
        var reported: [String: String] = [:]
        for (phase, reason) in segment.unobservable where reported[phase] == nil {
            reported[phase] = reason
        }
        var missing: [String: String] = [:]

        // exec
        if let start = segment.startNs {
            if position == 0 {
                addSpan(LaunchPhase.exec, from: spawnNs, to: start, image: image)
            } else {
                addInstant(LaunchPhase.exec, at: start, image: image)
            }
        } else {
            missing[LaunchPhase.exec] = "the program's first instruction was not observed"
        }

        var relocationStarted: UInt64?
        var relocationFinished: UInt64?
        var entry: UInt64?
        var programInit: UInt64?
        var main: UInt64?
        for event in segment.boundaries {
            switch event {
            case .relocationStarted(let atNs) where relocationStarted == nil: relocationStarted = atNs
            case .relocationFinished(let atNs) where relocationFinished == nil:
                relocationFinished = atNs
            case .entryReached(let atNs) where entry == nil: entry = atNs
            case .programInitStarted(let atNs) where programInit == nil: programInit = atNs
            case .mainReached(let atNs) where main == nil: main = atNs
            default: break
            }
        }

        // loader.map, loader.relocate
        if let start = segment.startNs, let relocationStarted {
            addBoundarySpan(LaunchPhase.loaderMap, from: start, to: relocationStarted, image: image)
        } else {
            missing[LaunchPhase.loaderMap] =
                segment.startNs == nil
                ? "the image's first instruction was not observed"
                : missingReason("relocation started", segmentAt: position)
        }
        if let relocationStarted, let relocationFinished {
            addBoundarySpan(LaunchPhase.loaderRelocate, from: relocationStarted, to: relocationFinished, image: image)
        } else {
            missing[LaunchPhase.loaderRelocate] = missingReason(
                relocationStarted == nil ? "relocation started" : "relocation finished",
                segmentAt: position)
        }

        // loader.init: each object's initializers run until the next boundary.
        let boundaries = segment.boundaries
        for (offset, event) in boundaries.enumerated() {
            guard case .objectInitStarted(let path, let start) = event else { continue }
            var end: UInt64?
            for later in boundaries[(offset + 1)...] {
                switch later {
                case .objectInitStarted(_, let atNs), .entryReached(let atNs),
                    .programInitStarted(let atNs), .mainReached(let atNs):
                    end = atNs
                default: continue
                }
                break
            }
            if end == nil, position + 1 < segments.count { end = segments[position + 1].startNs }
            if end == nil { end = exit?.atNs }
            if let end, let lost = lostHits(from: start, to: end) {
                markAbsent(LaunchPhase.loaderInit, "the initializers of \(path): \(lost)", image: image)
            } else if let end {
                addSpan(LaunchPhase.loaderInit, from: start, to: end, object: path, image: image)
            } else {
                markAbsent(
                    LaunchPhase.loaderInit,
                    "the initializers of \(path) had not finished when the trace ended",
                    image: image)
            }
        }

        // program.start, program.init, main
        if let entry, let programInit {
            addBoundarySpan(LaunchPhase.programStart, from: entry, to: programInit, image: image)
        }
        if let start = programInit ?? entry, let main {
            addBoundarySpan(LaunchPhase.programInit, from: start, to: main, image: image)
        } else {
            missing[LaunchPhase.programInit] = missingReason(
                entry == nil ? "the program's entry point" : "main", segmentAt: position)
        }
        if let main {
            addInstant(LaunchPhase.main, at: main, image: image)
            metrics.timeToMainNs = offset(main)
        } else {
            missing[LaunchPhase.main] = missingReason("main", segmentAt: position)
        }

        // The tracer's own reasons (added by `applyUnobservable`) win over derived ones.
        for phase in [
            LaunchPhase.exec, LaunchPhase.loaderMap, LaunchPhase.loaderRelocate,
            LaunchPhase.programInit, LaunchPhase.main,
        ] {
            if let reason = missing[phase], reported[phase] == nil {
                markAbsent(phase, reason, image: image)
            }
        }
    }

    /// A span whose end is a boundary hit: absent when hits were lost inside it, since the
    /// boundary's first hit may have been among them (the one seen a later, repeated one, or
    /// the next boundary's). Its start was seen, so a loss before it changes nothing.
    mutating func addBoundarySpan(_ name: String, from start: UInt64, to end: UInt64, image: Int?) {
        if let lost = lostHits(from: start, to: end) {
            markAbsent(name, lost, image: image)
        } else {
            addSpan(name, from: start, to: end, image: image)
        }
    }

    /// Why a span from `start` to `end` is not measured, when a loss window overlaps it: the
    /// windows' hits and their extent, in ms after the spawn.
    func lostHits(from start: UInt64, to end: UInt64) -> String? {
        let inside = losses.filter { $0.toNs > start && $0.fromNs < end }
        guard let from = inside.map(\.fromNs).min(), let to = inside.map(\.toNs).max() else { return nil }
        let count = inside.reduce(UInt64(0)) { $0 &+ $1.count }
        return "\(PhaseTimeline.endMayHaveBeenLost) (\(count) hit(s) lost between \(Self.milliseconds(offset(from))) and \(Self.milliseconds(offset(to))) ms)"
    }

    /// `ns` as milliseconds with two decimals.
    static func milliseconds(_ ns: UInt64) -> String {
        let hundredths = (ns + 5_000) / 10_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    // MARK: Hook phases

    mutating func buildHookPhases() {
        var openPhases: [String: [UInt64]] = [:]
        var openTasks: [String: UInt64] = [:]
        var taskOrder: [String] = []
        var firstFrames: [UInt64] = []
        var firstExtendNs: UInt64?
        var taskEnds: [UInt64] = []

        for hook in hooks {
            switch hook.kind {
            case .begin:
                openPhases[hook.name, default: []].append(hook.atNs)
            case .end:
                if let start = openPhases[hook.name]?.popLast() {
                    addSpan(hook.name, from: start, to: hook.atNs, image: image(at: start), source: "hook")
                } else {
                    warn(.endWithoutBegin, "Phase '\(hook.name)' ended without a begin.")
                }
            case .firstFrame:
                firstFrames.append(hook.atNs)
            case .extend:
                if openTasks[hook.name] != nil {
                    warn(.duplicateExtendedTask, "Task '\(hook.name)' was extended while already running; the second call was ignored.")
                    continue
                }
                if firstExtendNs == nil { firstExtendNs = hook.atNs }
                if !taskOrder.contains(hook.name) {
                    taskOrder.append(hook.name)
                    if taskOrder.count == PhaseTimeline.maximumExtendedTasks + 1 {
                        warn(.tooManyExtendedTasks, "More than \(PhaseTimeline.maximumExtendedTasks) extended-launch tasks; MetricKit accepts at most \(PhaseTimeline.maximumExtendedTasks).")
                    }
                    if hook.name.count > PhaseTimeline.maximumTaskIDLength {
                        warn(.taskIDTooLong, "Task id '\(hook.name.prefix(32))…' has \(hook.name.count) characters; MetricKit accepts at most \(PhaseTimeline.maximumTaskIDLength).")
                    }
                }
                openTasks[hook.name] = hook.atNs
            case .finishExtend:
                if let start = openTasks.removeValue(forKey: hook.name) {
                    addSpan(
                        LaunchPhase.extendedLaunch, from: start, to: hook.atNs, task: hook.name,
                        image: image(at: start))
                    taskEnds.append(hook.atNs)
                } else {
                    warn(.finishWithoutExtend, "Task '\(hook.name)' finished without being extended.")
                }
            }
        }

        for (name, starts) in openPhases.sorted(by: { $0.key < $1.key }) {
            for start in starts {
                warn(.beginWithoutEnd, "Phase '\(name)' began but never ended.")
                let end = ended.map { " before launchprof ended the process (\($0.reason))" } ?? ""
                markAbsent(name, "it began at \(offset(start)) ns but never ended" + end, image: image(at: start))
            }
        }
        for name in taskOrder where openTasks[name] != nil {
            warn(.extendedTaskNotFinished, "Task '\(name)' was extended but never finished.")
            markAbsent(
                LaunchPhase.extendedLaunch, "task '\(name)' was extended but never finished",
                image: openTasks[name].flatMap { image(at: $0) })
        }

        if let windowMapped {
            addInstant(LaunchPhase.windowMapped, at: windowMapped.atNs, image: image(at: windowMapped.atNs))
        }
        // firstFrame: by the readiness policy, the same rule the run monitor ended the launch by.
        var cleanExitNs: UInt64?
        if let exit, case .exited(0) = exit.status { cleanExitNs = exit.atNs }
        let evidence = ReadinessPolicy.Evidence(
            hookFirstFrameNs: firstFrames.first, readyNs: ready?.atNs, displayFrameNs: displayFrame?.atNs,
            cleanExitNs: cleanExitNs)
        if readiness.takesHookFirstFrame, firstFrames.count > 1 {
            warn(.duplicateFirstFrame, "first-frame was sent \(firstFrames.count) times; the first one counts.")
        }
        if let firstFrame = readiness.firstFrame(evidence) {
            addInstant(LaunchPhase.firstFrame, at: firstFrame, image: image(at: firstFrame))
            metrics.timeToFirstFrameNs = offset(firstFrame)
            if let firstExtendNs, firstExtendNs > firstFrame {
                warn(.extendedTaskAfterFirstFrame, "The first extended-launch task started after the first frame; MetricKit requires it to start before.")
            }
            if openTasks.isEmpty {
                metrics.extendedLaunchNs = offset(max(firstFrame, taskEnds.max() ?? firstFrame))
            }
        } else {
            markAbsent(LaunchPhase.firstFrame, readiness.absenceReason(exit: exit.map { exitDescription($0.status) }), image: nil)
        }
    }

    // MARK: Exit

    /// The runtime probes' spans (`ProbedSpan`): run-time loads, toolkit phases, Python's start
    /// and imports. A toolkit's `willFinishLaunching` or `didFinishLaunching` gives way to the
    /// app's own hook phase of that name; a span the process ended inside is absent.
    mutating func buildProbedPhases() {
        let hooked = Set(phases.filter { $0.source == "hook" }.map(\.name))
        for span in probed {
            let isAppPhase = span.name == LaunchPhase.willFinishLaunching || span.name == LaunchPhase.didFinishLaunching
            if isAppPhase, hooked.contains(span.name) { continue }
            guard let end = span.endNs else {
                let what = span.object.map { "\(span.name) \($0)" } ?? span.name
                markAbsent(
                    span.name, "\(what) began at \(offset(span.startNs)) ns and the process ended before it did",
                    image: image(at: span.startNs))
                continue
            }
            addSpan(
                span.name, from: span.startNs, to: end, object: span.object, image: image(at: span.startNs),
                source: span.source, thread: span.thread, caller: span.caller)
        }
    }

    mutating func buildExit() {
        guard let exit else {
            markAbsent(LaunchPhase.exit, "the process had not exited when the trace ended", image: nil)
            return
        }
        addInstant(LaunchPhase.exit, at: exit.atNs, image: image(at: exit.atNs))
        switch exit.status {
        case .killedByLaunchprof, .exitedWhenEnded:
            // launchprof chose when it ended: not a property of the program.
            break
        case .exited, .signaled:
            metrics.exitNs = offset(exit.atNs)
        }
    }

    /// The tracer's `unobservable` reasons, for phases that were not measured after all (a
    /// phase measured from another source, e.g. a first frame from the exit, is not absent).
    mutating func applyUnobservable() {
        for segment in segments {
            let image = Self.imageField(segment.index)
            for (phase, reason) in segment.unobservable
            where !phases.contains(where: { $0.name == phase && $0.image == image }) {
                markAbsent(phase, reason, image: image)
            }
        }
    }

    func finish() -> PhaseTimeline {
        let ordered = phases.enumerated().sorted {
            ($0.element.startNs, $0.offset) < ($1.element.startNs, $1.offset)
        }.map(\.element)
        return PhaseTimeline(
            phases: ordered, metrics: metrics, absent: absent, warnings: warnings,
            exitStatus: exit?.status, spawnedAtNs: spawnNs)
    }
}
