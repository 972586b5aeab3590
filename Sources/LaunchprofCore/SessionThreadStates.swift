import LaunchprofSystem
import CLaunchprof
import LaunchprofAnalysis
import LaunchprofReport
import LaunchprofSampling
import LaunchprofTracing
import Synchronization

/// Thread states for every run of a session (`--no-thread-states` turns them off): the
/// scheduler-event source on the thread that spawns the children (opened again when a session's
/// launches move to another thread), the thread that empties its rings while a launch runs, and
/// the analysis that puts each run's states, causes and reasons into it.
final class SessionThreadStates: Sendable {
    /// One launching thread's source and the thread that drains it: a prewarm pool launches
    /// from several threads at once, and the events follow the thread that spawns.
    final class ThreadSource: @unchecked Sendable {
        let source: SchedulerEventSource
        let drainThread: JobThread
        /// Between `begin` and `end` (under the session's lock).
        var busy = false

        init(_ source: SchedulerEventSource, drainThread: JobThread) {
            self.source = source
            self.drainThread = drainThread
        }
    }

    private let sources = Mutex<[Int32: ThreadSource]>([:])
    /// Drain threads made up front, on the thread that makes the session: one made later on a
    /// launching thread would inherit its pinned CPU (and take the child's CPU to drain).
    private let idleDrainThreads: Mutex<[JobThread]>
    private let allDrainThreads: [JobThread]
    static let drainThreads = 4
    /// Why the events cannot be recorded here (said once per run, as a warning).
    private let unavailableReason = Mutex<String?>(nil)
    /// Files to name page reads of files the process does not map (the program's closure).
    private let knownFiles: [String]

    init(knownFiles: [String]) {
        self.knownFiles = knownFiles
        allDrainThreads = (0..<Self.drainThreads).map { _ in JobThread() }
        idleDrainThreads = Mutex(allDrainThreads)
    }

    deinit {
        for thread in allDrainThreads { thread.stop() }
    }

    var unavailable: String? { unavailableReason.withLock { $0 } }

    /// Enables the events just before a spawn, on the thread that spawns; nil when they cannot
    /// be recorded.
    func begin() -> ThreadSource? {
        let thread = lp_sched_thread_id()
        var launch = sources.withLock { sources in
            sources[thread]?.busy = true
            return sources[thread]
        }
        if launch == nil {
            // A source of a thread that launches no more (an earlier pipeline's) gives back its
            // drain thread.
            let reclaimed = sources.withLock { sources -> JobThread? in
                guard let (idle, stale) = sources.first(where: { !$0.value.busy }) else { return nil }
                sources[idle] = nil
                return stale.drainThread
            }
            if let reclaimed { idleDrainThreads.withLock { $0.append(reclaimed) } }
            guard let drain = idleDrainThreads.withLock({ $0.popLast() }) else {
                unavailableReason.withLock {
                    $0 = "more than \(Self.drainThreads) threads launch at once"
                }
                return nil
            }
            do throws(SchedulerEventSource.Unavailable) {
                let opened = ThreadSource(try SchedulerEventSource(), drainThread: drain)
                opened.busy = true
                sources.withLock { $0[thread] = opened }
                launch = opened
            } catch {
                idleDrainThreads.withLock { $0.append(drain) }
                unavailableReason.withLock { $0 = error.description }
                return nil
            }
        }
        guard let launch else { return nil }
        launch.source.begin()
        let source = launch.source
        launch.drainThread.start { source.collect() }
        return launch
    }

    /// Disables them once the launch is over (the child reaped) and returns what they recorded.
    func end(_ launch: ThreadSource) -> SchedulerCapture {
        launch.source.stop()
        launch.drainThread.waitForJob()
        let capture = launch.source.end()
        sources.withLock { _ in launch.busy = false }
        return capture
    }

    /// Puts the states into `run` (spawned at `spawnNs`, CLOCK_MONOTONIC): each phase's, the
    /// launch's (spawn → first frame, or the readiness point, or the exit), the causes, the
    /// reasons. `heldFrozen` (CLOCK_MONOTONIC) is a prewarmed launch's hold, left out.
    func annotate(_ run: inout LaunchRun, capture: SchedulerCapture?, spawnNs: UInt64, heldFrozen: Range<UInt64>? = nil) {
        guard let capture else {
            if let unavailable = unavailable {
                run.warnings.append(TimelineWarning(.threadStatesUnavailable, "no thread states: \(unavailable)"))
            }
            return
        }
        // A lost record may be any of the main thread's switches or wake-ups: every state after
        // it could be wrong, so the run has none rather than figures beside a caveat.
        guard capture.lostRecords == 0 else {
            run.warnings.append(TimelineWarning(
                .threadStatesLost,
                "no thread states: the kernel dropped \(capture.lostRecords) scheduler record(s) during the launch"
                    + " (launchprof's buffer was full), so the main thread's time cannot be accounted for"))
            return
        }
        let trace = capture.trace(symbols: KernelSymbols.shared, knownFiles: knownFiles)
        let launchEndNs = run.metrics.timeToFirstFrameNs ?? run.metrics.exitNs ?? run.phases.map(\.endNs).max() ?? 0
        let analyzer = ThreadStateAnalyzer(processName: { pid in
            SmallFile.read("/proc/\(pid)/comm").map { String($0.prefix { $0 != "\n" }) }
        })
        let frozen = heldFrozen.map { ($0.lowerBound &- min($0.lowerBound, spawnNs))..<($0.upperBound &- min($0.upperBound, spawnNs)) }
        let result = analyzer.analyse(
            trace, spawnNs: spawnNs, mainThread: run.pid, launchEndNs: launchEndNs, phases: run.phases, frozen: frozen)
        run.phases = result.phases
        run.threadStates = result.states
    }
}
