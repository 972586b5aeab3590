import LaunchprofReport

/// Accounts for every nanosecond of a launch's main thread from the scheduler's events: its
/// state in each phase and over the launch, who ran on its CPU while it waited for one, who or
/// what ended its waits, which files it waited to read, whose locks it waited on, the other
/// threads' time, and the slow-launch reasons those add up to. Pure: tested with plain events.
public struct ThreadStateAnalyzer: Sendable {
    /// Names processes the events did not name (a process whose main thread did not switch
    /// during the launch): the caller reads them where it can.
    public var processName: @Sendable (Int32) -> String?

    public init(processName: @escaping @Sendable (Int32) -> String? = { _ in nil }) {
        self.processName = processName
    }

    public struct Result: Sendable, Equatable {
        /// The run's phases, each with its `threadState` (spans only; instants have none).
        public var phases: [LaunchPhase]
        public var states: LaunchThreadStates
    }

    /// Analyses `trace` for the launch spawned at `spawnNs` (CLOCK_MONOTONIC) whose main thread
    /// is `mainThread` (the child's pid) and which ended at `launchEndNs` (from the spawn).
    /// `frozen` (ns from the spawn) is a prewarmed launch's hold: the process was frozen by
    /// launchprof and did nothing of its own, so the hold is left out of every state, cause and
    /// reason (as the sample analyzer leaves it out); the launch's states then add up to
    /// `launchEndNs` minus the hold.
    public func analyse(
        _ trace: SchedulerTrace, spawnNs: UInt64, mainThread: Int32, launchEndNs: UInt64, phases: [LaunchPhase],
        frozen: Range<UInt64>? = nil
    ) -> Result {
        var index = TraceIndex(trace, mainThread: mainThread)
        index.processName = processName
        let windowEndNs = spawnNs + max(launchEndNs, phases.map(\.endNs).max() ?? 0)
        let held = frozen.flatMap { $0.isEmpty ? nil : (spawnNs + $0.lowerBound)..<(spawnNs + $0.upperBound) }
        var main = mainTimeline(index, spawnNs: spawnNs, endNs: windowEndNs)
        if let held { main = main.leavingOut(held) }
        let launchEnd = spawnNs + launchEndNs
        let heldInLaunchNs = held.map { min($0.upperBound, launchEnd) &- min($0.lowerBound, launchEnd) } ?? 0
        var result = Result(phases: phases, states: LaunchThreadStates(
            mainThread: mainThread, launchEndNs: launchEndNs, launch: main.breakdown(from: spawnNs, to: launchEnd)))
        for position in result.phases.indices where result.phases[position].durationNs > 0 {
            let phase = result.phases[position]
            result.phases[position].threadState = main.breakdown(from: spawnNs + phase.startNs, to: spawnNs + phase.endNs)
        }
        let launchSpans = main.spans.compactMap { span -> ThreadTimeline.Span? in
            guard span.startNs < launchEnd else { return nil }
            var clipped = span
            clipped.endNs = min(span.endNs, launchEnd)
            return clipped
        }
        var causes = Causes(index: index, analyzer: self, mainThread: mainThread)
        causes.collect(launchSpans)
        var states = result.states
        states.timeline = reportTimeline(main.spans, index: index, spawnNs: spawnNs)
        states.cpuCompetitors = Array(causes.competitors.prefix(3))
        states.wakers = causes.wakers
        states.fileReads = causes.fileReads(from: spawnNs, to: launchEnd)
        states.lockHolders = causes.lockHolders
        states.threads = otherThreads(index, spawnNs: spawnNs, endNs: launchEnd, leavingOut: held)
        states.reasons = SlowLaunchRules.reasons(
            launch: states.launch, launchNs: launchEndNs - heldInLaunchNs, causes: causes, fileReads: states.fileReads,
            phases: result.phases, spawnNs: spawnNs)
        states.notes = notes(trace, index: index, main: main, launchEnd: launchEnd)
        result.states = states
        return result
    }

    // MARK: Timelines

    /// The main thread's timeline: launchprof's spawning thread from the spawn until the child
    /// exists (it is the launch's only thread then), then the child.
    func mainTimeline(_ index: TraceIndex, spawnNs: UInt64, endNs: UInt64) -> ThreadTimeline {
        let main = index.mainThread
        // The child is runnable from its creation (`sched_wakeup_new`); without that record, from
        // the spawning thread's first switch-out (it waits for the vfork child right after
        // creating it).
        let spawner = index.spawningThread
        let created = index.events[main]?.compactMap { event -> UInt64? in
            if case .created(let wakeup) = event { return wakeup.timeNs } else { return nil }
        }.min()
        let firstSwitchOut = index.events[spawner]?.compactMap { event -> UInt64? in
            if case .switchOut(let record, _) = event, record.timeNs >= spawnNs { return record.timeNs } else { return nil }
        }.min()
        // A window that starts after the child's creation (a phase's) has no spawning part.
        let childFirst = index.events[main]?.map(\.timeNs).min()
        var childStart = created ?? firstSwitchOut ?? spawnNs
        if let childFirst, created == nil { childStart = min(childStart, childFirst) }
        childStart = min(max(childStart, spawnNs), endNs)
        let before = ThreadTimeline.build(
            tid: spawner, events: index.events[spawner] ?? [], startNs: spawnNs, endNs: childStart, initial: .running)
        // Events before the window's start set the state it starts in.
        let child = ThreadTimeline.build(
            tid: main, events: index.events[main] ?? [], startNs: childStart, endNs: endNs, initial: .runnable)
        return ThreadTimeline(tid: main, spans: before.spans + child.spans, exitedAtNs: child.exitedAtNs)
    }

    /// The process's other threads over the launch.
    func otherThreads(_ index: TraceIndex, spawnNs: UInt64, endNs: UInt64, leavingOut held: Range<UInt64>? = nil) -> [ThreadStateSummary] {
        index.processThreads.subtracting([index.mainThread]).sorted().compactMap { tid in
            let events = index.events[tid] ?? []
            guard let first = events.map(\.timeNs).min(), first < endNs else { return nil }
            let created = events.contains { if case .created = $0 { true } else { false } }
            let start = max(first, spawnNs)
            var timeline = ThreadTimeline.build(
                tid: tid, events: events, startNs: start, endNs: endNs, initial: created ? .runnable : .running)
            if let held { timeline = timeline.leavingOut(held) }
            let end = min(timeline.exitedAtNs ?? endNs, endNs)
            return ThreadStateSummary(
                tid: tid, name: index.threadName(tid), startNs: start - spawnNs, endNs: max(end, start) - spawnNs,
                states: timeline.breakdown(from: start, to: max(end, start)))
        }
    }

    /// The main thread's spans for the report (ns from the spawn), adjacent ones of one state and
    /// cause merged.
    func reportTimeline(_ spans: [ThreadTimeline.Span], index: TraceIndex, spawnNs: UInt64) -> [ThreadStateSpan] {
        var result: [ThreadStateSpan] = []
        for span in spans {
            let wakedBy = span.wakeup.map { wakeup -> String in
                switch WakeCause.Kind(wakeup, wait: span.wait) {
                case .thread: index.task(wakeup.wakerTID, pid: wakeup.wakerPID).text
                case .timer: "timer"
                case .interrupt: "interrupt"
                case .unknown: "unseen"
                }
            }
            let next = ThreadStateSpan(
                startNs: span.startNs - spawnNs, durationNs: span.durationNs, state: span.state,
                blockedIn: span.wait?.blockedIn, wakedBy: wakedBy)
            if var last = result.last, last.state == next.state, last.blockedIn == next.blockedIn,
                last.wakedBy == next.wakedBy, last.endNs == next.startNs
            {
                last.durationNs += next.durationNs
                result[result.count - 1] = last
            } else {
                result.append(next)
            }
        }
        return result
    }

    func notes(_ trace: SchedulerTrace, index: TraceIndex, main: ThreadTimeline, launchEnd: UInt64) -> [String] {
        var notes: [String] = []
        let waits = trace.followedSwitchOuts.filter { $0.record.previousState & 0xff != 0 && $0.record.previousTID == index.mainThread }
        if !waits.isEmpty, waits.allSatisfy({ $0.stack == nil }) {
            notes.append("no kernel stacks at the main thread's switches (kernel symbols unreadable?): futex waits count as sleeping, disk reads as uninterruptible")
        }
        if trace.wakeupsAbove > 0, index.mainThread <= trace.wakeupsAbove {
            notes.append("thread ids wrapped around during the launch: wake-ups of thread \(index.mainThread) were not recorded")
        }
        if let exited = main.exitedAtNs, exited < launchEnd {
            notes.append("the main thread exited \(DurationText.text(launchEnd - exited)) before the launch ended: that time counts as uninterruptible")
        }
        return notes
    }
}

extension WakeCause.Kind {
    /// What ended a wait: a thread, or — woken from an interrupt, where the task on the CPU is
    /// not the cause — a timer for a wait with a deadline, else an interrupt.
    init(_ wakeup: SchedulerTrace.Wakeup?, wait: KernelWait?) {
        guard let wakeup else {
            self = .unknown
            return
        }
        if wakeup.inInterrupt || wakeup.wakerTID == 0 {
            self = wait?.timed == true ? .timer : .interrupt
        } else {
            self = .thread
        }
    }
}

/// The trace's events by thread, and the names of threads and processes.
struct TraceIndex {
    let mainThread: Int32
    let spawningThread: Int32
    let launchprofPID: Int32
    /// Events of the threads analysed (the main thread, the spawning thread, the process's
    /// threads).
    var events: [Int32: [ThreadTimeline.Event]] = [:]
    /// The process's threads (switch records of process `mainThread`).
    var processThreads: Set<Int32> = []
    var names: [Int32: String] = [:]
    var processOf: [Int32: Int32] = [:]
    /// Each CPU's switches in time order: (time, the task that got the CPU).
    var cpuRuns: [Int32: [(timeNs: UInt64, tid: Int32, name: String)]] = [:]
    let trace: SchedulerTrace
    var processName: @Sendable (Int32) -> String? = { _ in nil }

    init(_ trace: SchedulerTrace, mainThread: Int32) {
        self.trace = trace
        self.mainThread = mainThread
        spawningThread = trace.spawningThread
        launchprofPID = trace.launchprofPID
        let followed = Set(trace.followedSwitchOuts.map(\.record.previousTID))
        processThreads.insert(mainThread)
        for stacked in trace.followedSwitchOuts where stacked.record.previousPID == mainThread {
            processThreads.insert(stacked.record.previousTID)
        }
        for record in trace.switches {
            if record.previousPID == mainThread { processThreads.insert(record.previousTID) }
            names[record.previousTID] = record.previousName
            names[record.nextTID] = record.nextName
            if let pid = record.previousPID { processOf[record.previousTID] = pid }
            cpuRuns[record.cpu, default: []].append((record.timeNs, record.nextTID, record.nextName))
        }
        for wakeup in trace.wakeups + trace.newTasks {
            if !wakeup.inInterrupt { processOf[wakeup.wakerTID] = wakeup.wakerPID }
            if names[wakeup.wakeeTID] == nil { names[wakeup.wakeeTID] = wakeup.wakeeName }
        }
        let analysed = processThreads.union([spawningThread])
        // perf's own switch-in records stand in for the tracepoint's where it has none (a kernel
        // can hide a task's switches; its successor's switch-in is then missing): a switch-in
        // with no tracepoint record of it in the `raceNs` before is one.
        var seenIns: [Int32: [UInt64]] = [:]
        for record in trace.switches where analysed.contains(record.nextTID) {
            seenIns[record.nextTID, default: []].append(record.timeNs)
        }
        for switchIn in trace.followedSwitchIns where analysed.contains(switchIn.tid) {
            let times = seenIns[switchIn.tid] ?? []
            var low = 0, high = times.count
            while low < high {
                let middle = (low + high) / 2
                if times[middle] <= switchIn.timeNs { low = middle + 1 } else { high = middle }
            }
            if low > 0, switchIn.timeNs - times[low - 1] <= ThreadTimeline.raceNs { continue }
            let name = names[switchIn.tid] ?? ""
            let record = SchedulerTrace.Switch(
                timeNs: switchIn.timeNs, cpu: switchIn.cpu, previousTID: -1, previousPID: nil, previousName: "",
                previousState: 0, nextTID: switchIn.tid, nextName: name)
            events[switchIn.tid, default: []].append(.switchIn(record))
            cpuRuns[switchIn.cpu, default: []].append((switchIn.timeNs, switchIn.tid, name))
        }
        for key in cpuRuns.keys { cpuRuns[key]?.sort { $0.timeNs < $1.timeNs } }
        for record in trace.switches {
            if analysed.contains(record.nextTID) { events[record.nextTID, default: []].append(.switchIn(record)) }
            if analysed.contains(record.previousTID), !followed.contains(record.previousTID) {
                events[record.previousTID, default: []].append(
                    .switchOut(record, KernelWait.classify(previousState: record.previousState, stack: nil)))
            }
        }
        for stacked in trace.followedSwitchOuts where analysed.contains(stacked.record.previousTID) {
            let stack = stacked.stack.flatMap { $0 < trace.stacks.count ? trace.stacks[$0] : nil }
            events[stacked.record.previousTID, default: []].append(
                .switchOut(stacked.record, KernelWait.classify(previousState: stacked.record.previousState, stack: stack)))
        }
        for wakeup in trace.wakeups where analysed.contains(wakeup.wakeeTID) {
            events[wakeup.wakeeTID, default: []].append(.woken(wakeup))
        }
        for wakeup in trace.newTasks where analysed.contains(wakeup.wakeeTID) {
            events[wakeup.wakeeTID, default: []].append(.created(wakeup))
        }
    }

    func threadName(_ tid: Int32) -> String { names[tid] ?? "thread \(tid)" }

    /// A task's name with its process's.
    func task(_ tid: Int32, pid: Int32? = nil) -> TaskName {
        let pid = pid ?? processOf[tid]
        let process = pid.flatMap { pid in
            pid == launchprofPID ? "launchprof" : (names[pid] ?? processName(pid))
        }
        return TaskName(pid: pid, process: process, tid: tid, thread: threadName(tid))
    }

    /// The tasks that ran on `cpu` during [startNs, endNs), with their time.
    func occupants(cpu: Int32, from startNs: UInt64, to endNs: UInt64) -> [(tid: Int32, ns: UInt64)] {
        guard let runs = cpuRuns[cpu], endNs > startNs else { return [] }
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].timeNs <= startNs { low = middle + 1 } else { high = middle }
        }
        var result: [Int32: UInt64] = [:]
        var position = low - 1
        var from = startNs
        while from < endNs {
            let next = position + 1 < runs.count ? min(runs[position + 1].timeNs, endNs) : endNs
            if position >= 0, next > from { result[runs[position].tid, default: 0] += next - from }
            from = max(from, next)
            position += 1
            if position >= runs.count { break }
        }
        return result.map { ($0.key, $0.value) }
    }
}
