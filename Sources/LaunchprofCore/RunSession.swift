import CLaunchprof
import LaunchprofELF
import LaunchprofAnalysis
import LaunchprofReport
import LaunchprofSampling
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof run`: launches a program under the tracer, one run per launch, for a
/// `LaunchPipeline` (which makes the warm-ups and measured runs and hands them to its sinks).
///
/// Everything that can be computed once is computed in `init` (the program's ELF closure, the
/// tracer's plan, argv/envp); each run then only spawns, traces and records.
public final class RunSession: LaunchSource, @unchecked Sendable {
    public let configuration: RunConfiguration
    public let program: LocatedProgram
    /// The first image's file (for a script: its interpreter), symlinks followed.
    public let imagePath: String
    public let buildID: String?
    /// Every file of the first image's closure, in load order. The ELF files themselves are not
    /// kept open: launchprof must not hold the pages `--cold` evicts.
    public let closurePaths: [String]
    private let plans: PlanCache
    let learned = LearnedLayout()
    /// Traces each launch (`LaunchTracer` unless a test scripts one).
    private let tracer: any LaunchTracing
    /// The child's environment but launchprof's hook variable, sorted (`KEY=VALUE`).
    private let baseEnvironment: [String]
    /// The observer of the boundaries before `main`, and why it was chosen.
    let observer: ResolvedObserver
    /// `--sample`: the symbolizer, drain thread and folded stacks shared by the runs.
    let sampling: SessionSampling?
    /// Thread states: the scheduler's events around each launch.
    let threadStates: SessionThreadStates?
    /// The display watched for the program's first frame (`--ready frame`, or automatic).
    let frameWatch: FrameWatch?
    /// /dev/null for the children's standard streams (read, write), opened once.
    private let devNull: (read: Int32, write: Int32)?

    /// - Parameter tracer: what traces each launch; nil: the real `LaunchTracer`, with a
    ///   `LearnedLayout` for the session.
    public init(configuration: RunConfiguration, tracer: (any LaunchTracing)? = nil) throws(RunError) {
        self.configuration = configuration
        let environment = configuration.childEnvironment
        baseEnvironment = environment.filter { $0.key != "LAUNCHPROF_HOOK_FD" }.map { "\($0.key)=\($0.value)" }.sorted()
        program = try ProgramLocator.locate(configuration.program, environment: environment)
        let image: ELFImage
        do {
            image = try ELFImage.read(path: program.imagePath)
        } catch {
            if program.script != nil, case .notFound = error {
                throw .interpreterMissing(script: program.path, interpreter: program.imagePath)
            }
            throw .cannotReadProgram(error)
        }
        let closure = DependencyResolver.system().resolve(program: image, environment: environment)
        imagePath = image.path
        buildID = image.buildID
        closurePaths = closure.objects.map(\.path)
        plans = PlanCache(environment: environment, runtimeProbes: configuration.runtimeProbes)
        let plan = plans.insert(ImagePlanner.plan(program: image, closure: closure), for: image.path)
        observer = try ResolvedObserver.resolve(configuration.observer, sysfsRoot: configuration.sysfsRoot)
        do throws(UprobeError) {
            // Once per session, before any run: arming a uprobe waits for a grace period.
            try observer.uprobes?.observer.arm(plan.uprobes)
        } catch {
            throw .observer(error)
        }
        sampling = configuration.sampling.map(SessionSampling.init)
        // A scripted tracer spawns nothing whose states could be recorded.
        threadStates = configuration.threadStates && tracer == nil
            ? SessionThreadStates(knownFiles: closurePaths + program.extraFiles) : nil
        // A launchprof killed during --resume-cycles left its cgroup: the next one removes it
        // (and thaws whatever it holds). One directory read per session.
        CgroupFreezer.removeStale()
        frameWatch = try FrameWatch.resolve(configuration)
        self.tracer = tracer ?? LaunchTracer(learned: learned)
        let nullRead = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let nullWrite = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if nullRead >= 0, nullWrite >= 0 {
            devNull = (nullRead, nullWrite)
        } else {
            // ChildIO opens it per launch, and says what failed.
            for fd in [nullRead, nullWrite] where fd >= 0 { close(fd) }
            devNull = nil
        }
    }

    deinit {
        if let devNull {
            close(devNull.read)
            close(devNull.write)
        }
    }

    /// The tracer's plan for the first image (prewarm's hazard scan uses it too).
    var firstImagePlan: ImagePlan? { plans.plan(for: imagePath) }

    public var target: LaunchReport.Target {
        LaunchReport.Target(path: program.path, arguments: configuration.arguments, buildID: buildID)
    }

    public var mode: LaunchReport.Mode {
        var mode = LaunchReport.Mode(
            runs: configuration.runs, warmup: configuration.warmup, cold: configuration.cold,
            readiness: configuration.readiness, timeoutNs: configuration.timeoutNs)
        mode.observer = observer.name
        mode.observerReason = observer.reason
        return mode
    }

    /// The observer that times the boundaries before `main`: "uprobe" or "ptrace".
    public var observerName: String { observer.name }

    var plannedRuns: (runs: Int, warmup: Int) { (configuration.runs, configuration.warmup) }
    var pinsTracer: Bool { configuration.pinCPU }

    /// Makes the batch's launches, one run each. A run that exec'd an image launchprof had not
    /// analysed is made again (at most 8 times) once the image is analysed, so every measured run
    /// observes the same boundaries. Uprobe hits are read for several runs at once
    /// (`PendingUprobeHits`): one exchange with the probe holder instead of a round trip after
    /// every launch (the holder reads its rings all along; without it, each launch is read as
    /// it ends); runs are completed and handed on in order, at most `batchRuns` runs or
    /// `batchNs` after the first waiting one.
    func makeRuns(
        _ batch: LaunchBatch, context: LaunchContext, finished: (Int, MeasuredRun) throws(RunError) -> Void
    ) throws(RunError) {
        let batches = observer.uprobes.map { !$0.observer.ownsRings } == true && sampling == nil
        let batchRuns = batches ? 32 : 1
        let batchNs: UInt64 = 100_000_000
        var waiting: [(traced: TracedRun, launch: Int)] = []
        var firstWaitingAt: UInt64 = 0
        func handOnWaiting() throws(RunError) {
            for (measured, launch) in zip(try complete(waiting.map(\.traced)), waiting.map(\.launch)) {
                try finished(launch, measured)
            }
            waiting = []
        }
        for launch in 0..<batch.count {
            if lp_interrupted() != 0 {
                try handOnWaiting()
                throw .interrupted(signal: lp_interrupted())
            }
            var traced = try traceOnce(index: batch.index(of: launch), context: context, defersUprobeHits: batches)
            var repeats = 0
            var discarded: [TracedRun] = []
            while traced.metNewImages, repeats < 8, lp_interrupted() == 0 {
                discarded.append(traced)
                traced = try traceOnce(index: batch.index(of: launch), context: context, defersUprobeHits: batches)
                repeats += 1
            }
            // Their hits are read (and dropped) so the observer stops keeping them.
            var dropped = discarded.map(\.result)
            PendingUprobeHits.completeAll(&dropped)
            if waiting.isEmpty { firstWaitingAt = lp_now_ns() }
            waiting.append((traced, launch))
            if lp_interrupted() != 0 {
                // Ctrl-C ended this launch: its run shows what the program reached, after the
                // runs before it (the pipeline keeps them all).
                try handOnWaiting()
                throw .interrupted(signal: lp_interrupted())
            }
            if waiting.count >= batchRuns || launch == batch.count - 1 || lp_now_ns() &- firstWaitingAt >= batchNs {
                try handOnWaiting()
            }
        }
    }

    /// One launch: channel, spawn, trace, monitor, timeline.
    /// Returns the run, and whether it met exec'd images that were analysed only after it.
    /// `customize` adjusts the request (prewarm: its environment and freeze point);
    /// `extraTimeoutNs` extends the timeout by time the launch is held frozen on purpose.
    func launchOnce(
        index: Int, context: LaunchContext, customize: ((inout TraceRequest) -> Void)? = nil, extraTimeoutNs: UInt64 = 0
    ) throws(RunError) -> MeasuredRun {
        let traced = try traceOnce(index: index, context: context, customize: customize, extraTimeoutNs: extraTimeoutNs)
        return try complete([traced])[0]
    }

    /// What one launch left to turn into its run once its uprobe hits are read.
    struct TracedRun {
        var index: Int
        var result: TraceResult
        var observed: RunMonitor.Outcome
        var residency: PageCache.Residency?
        var frameWarnings: [TimelineWarning]
        var capture: LaunchSampler.Capture?
        var sampler: SessionSampling.Launch?
        var schedulerCapture: SchedulerCapture?
        /// It met exec'd images that were analysed only after it.
        var metNewImages: Bool
    }

    /// The launch up to its end: spawned, traced and watched; its run is built by `complete`.
    /// `defersUprobeHits`: its probe hits are read by `complete`, with other launches' at once.
    func traceOnce(
        index: Int, context: LaunchContext, customize: ((inout TraceRequest) -> Void)? = nil,
        extraTimeoutNs: UInt64 = 0, defersUprobeHits: Bool = false
    ) throws(RunError) -> TracedRun {
        let (pinnedCPU, monitorThread) = (context.pinnedCPU(forRun: index), context.monitorThread)
        // This is the pinned tracer thread: it moves to the run's CPU before the spawn, and the
        // child (a vfork of it) starts there.
        if let pinnedCPU, lp_thread_pinned_cpu() != pinnedCPU { _ = lp_pin(0, pinnedCPU) }
        var residency: PageCache.Residency?
        if configuration.cold {
            residency = PageCache.evict(closurePaths + program.extraFiles)
        }
        // The monitor thread's channel, one launch at a time (`MonitorThread.hookChannel`).
        let channel = monitorThread.hookChannel
        let io = try ChildIO(configuration: configuration, devNull: devNull)
        defer { io.close() }

        var request = TraceRequest(
            executable: program.path, arguments: program.argv(configuration.arguments),
            environment: environmentStrings(hookDescriptor: Int32(LP_CHILD_HOOK_FD)),
            plan: plans.plan(for: imagePath))
        if let frameWatch { request.environment = frameWatch.childEnvironment(request.environment) }
        request.workingDirectory = configuration.workingDirectory
        request.standardInput = io.childInput
        request.standardOutput = io.childOutput
        request.standardError = io.childError
        request.hookDescriptor = channel.childEnd
        request.uprobes = observer.uprobes
        // Pinned until main, unless the runtime sizes itself from its CPU mask before main (Go).
        // With uprobes, pinned until the exec stop only (nothing stops it at main to unpin it),
        // which is before any of the program's code, so Go's runtime sees its own mask.
        if request.plan?.readsAffinityBeforeMain == true && request.uprobes == nil {
            request.unpinChild = pinnedCPU != nil
        } else {
            request.pinnedCPU = pinnedCPU
        }
        request.detectListen = configuration.readiness.watchers.contains(.listen)
        request.defersUprobeHits = defersUprobeHits
        let sampler = try sampling?.launch()
        sampler?.attach(to: &request)
        customize?(&request)

        let control = TraceControl()
        let monitor = RunMonitor(
            streams: .init(
                hookSocket: channel.launchprofEnd, standardOutput: io.watchedOutput,
                standardError: io.watchedError, outputDestination: io.outputDestination,
                errorDestination: io.errorDestination),
            readiness: configuration.readiness,
            timeoutNs: configuration.timeoutNs.map { $0 &+ extraTimeoutNs }, lingerNs: configuration.lingerNs,
            graceNs: configuration.terminationGraceNs,
            control: control, wake: monitorThread.wake, resumeCycles: configuration.resumeCycles)
        // Before the monitor's thread reads the display's name, and before the spawn.
        frameWatch?.begin(control: control, monitor: monitor)
        defer { frameWatch?.end() }
        monitor.start(on: monitorThread)
        let result: TraceResult
        let statesLaunch = threadStates?.begin()
        do {
            result = try tracer.trace(request, planForImage: { [plans] path in plans.plan(for: path) }, control: control)
        } catch {
            if let statesLaunch { _ = threadStates?.end(statesLaunch) }
            _ = sampler?.finish()
            _ = monitor.finish()
            let signal = lp_interrupted()
            throw signal != 0 ? .interrupted(signal: signal) : .tracer(error)
        }
        let schedulerCapture = statesLaunch.flatMap { threadStates?.end($0) }
        io.closeChildEnds()
        let capture = sampler?.finish()
        let observed = monitor.finish()
        var metNewImages = false
        for path in result.unplannedImages where plans.plan(for: path) == nil {
            metNewImages = plans.analyse(path) || metNewImages
            // Between runs, so no run pays the registration.
            if let plan = plans.plan(for: path) { try? observer.uprobes?.observer.arm(plan.uprobes) }
        }
        return TracedRun(
            index: index, result: result, observed: observed, residency: residency,
            frameWarnings: frameWatch?.warnings ?? [], capture: capture, sampler: sampler,
            schedulerCapture: schedulerCapture, metNewImages: metNewImages)
    }

    /// The runs of traced launches, in order: their uprobe hits read in one exchange, then each
    /// one's timeline, outcome and samples.
    func complete(_ traced: [TracedRun]) throws(RunError) -> [MeasuredRun] {
        var results = traced.map(\.result)
        PendingUprobeHits.completeAll(&results)
        var runs: [MeasuredRun] = []
        for (launch, result) in zip(traced, results) {
            runs.append(try complete(launch, result: result))
        }
        return runs
    }

    private func complete(_ launch: TracedRun, result: TraceResult) throws(RunError) -> MeasuredRun {
        let (index, observed, residency) = (launch.index, launch.observed, launch.residency)
        var timeline: PhaseTimeline
        do {
            timeline = try PhaseTimeline(
                events: EventMerge.merge(result.events, observed.events), readiness: configuration.readiness)
        } catch {
            throw .report(error)
        }
        timeline.warnings += observed.warnings + launch.frameWarnings
        if !result.leftoverProcesses.isEmpty {
            let pids = result.leftoverProcesses.map(String.init).joined(separator: ", ")
            timeline.warnings.append(TimelineWarning(
                .processesLeftBehind,
                "the child left \(result.leftoverProcesses.count) process(es) running (pid \(pids)); launchprof killed them"))
        }
        if !result.crashStack.isEmpty {
            timeline.warnings.append(TimelineWarning.crashStack(
                (sampling?.symbolizer ?? StackSymbolizer.shared).frameNames(result.crashStack, mappings: result.crashMappings)))
        }
        if result.lostSamples > 0 {
            // The rings are shared by every process that hits a probe (a spinning `main` of this
            // launch or another): say whether this run's boundaries are whole all the same.
            let boundaries = [LaunchPhase.loaderMap, LaunchPhase.loaderRelocate, LaunchPhase.loaderInit, LaunchPhase.programInit, LaunchPhase.main]
            let whole = !timeline.absent.contains { boundaries.contains($0.phase) }
            // A boundary missing from a run that lost hits may be one of them: say so, rather
            // than the reason the timeline would infer (an exit "before relocation started").
            // A span absent because hits were lost inside it already says when.
            for index in timeline.absent.indices
            where boundaries.contains(timeline.absent[index].phase)
                && !timeline.absent[index].reason.contains(PhaseTimeline.endMayHaveBeenLost)
            {
                timeline.absent[index].reason = "not observed: \(result.lostSamples) probe hit(s) of this run were lost (the uprobe ring buffer was full), this boundary's may be among them"
            }
            timeline.warnings.append(TimelineWarning(
                .observerSamplesLost,
                "\(result.lostSamples) probe hit(s) found the uprobe ring buffer full; "
                    + (whole ? "none of this run's boundaries is missing" : "boundaries may be missing")))
        }
        if let faults = result.pageFaults, faults.major > 0, !configuration.cold {
            timeline.warnings.append(TimelineWarning(
                .pagesReadFromDisk,
                "the launch read \(faults.major) page(s) from disk (major faults): part of its files had left the page cache,"
                    + " so it was not a warm launch"))
        }
        var run = LaunchRun(
            index: index, pid: result.pid, timeline: timeline, timedOut: observed.timedOut,
            residentBeforeBytes: residency?.residentBytes, closureBytes: residency?.totalBytes,
            tracerPauseNs: result.pauseNs, outcome: Self.outcome(
                of: timeline, observed, timeoutNs: configuration.timeoutNs, resumeCycles: configuration.resumeCycles,
                interruptedBy: result.interruptedBy))
        run.majorFaults = result.pageFaults?.major
        run.minorFaults = result.pageFaults?.minor
        if configuration.resumeCycles > 0 { Self.addLifecycle(&run, observed, spawn: result.events.first) }
        if case .spawned(let spawnedAt) = result.events.first {
            run.phases = ObserverAccounting.assign(result.observerCosts, spawnedAtNs: spawnedAt, to: run.phases)
            run.spawnedAt = PlatformFacts.spawnInstant(monotonicNs: spawnedAt)
        }
        threadStates?.annotate(
            &run, capture: launch.schedulerCapture, spawnNs: result.events.first?.timeNs ?? 0, heldFrozen: result.heldFrozen)
        var folded: [String: Int] = [:]
        if let sampling, let sampler = launch.sampler {
            folded = try sampling.annotate(
                &run, capture: launch.capture, sampler: sampler.sampler, spawnNs: result.events.first?.timeNs ?? 0,
                heldFrozen: result.heldFrozen)
        }
        return MeasuredRun(run: run, foldedStacks: folded)
    }

    /// The child's environment as `KEY=VALUE` strings: the same in every run but for the hook
    /// channel's descriptor, so the rest is built once.
    private func environmentStrings(hookDescriptor: Int32) -> [String] {
        baseEnvironment + ["LAUNCHPROF_HOOK_FD=\(hookDescriptor)"]
    }
}

/// Image plans by real path: the first image's, and those of images a child execs, analysed
/// after the run that first met them.
final class PlanCache: Sendable {
    private let plans = Mutex<[String: ImagePlan]>([:])
    private let environment: [String: String]
    /// `RunConfiguration.runtimeProbes`: without them a plan has no runtime probes.
    private let runtimeProbes: Bool

    init(environment: [String: String], runtimeProbes: Bool = true) {
        self.environment = environment
        self.runtimeProbes = runtimeProbes
    }

    /// Keeps `plan` for `path`, as the session will use it.
    @discardableResult
    func insert(_ plan: ImagePlan, for path: String) -> ImagePlan {
        var plan = plan
        if !runtimeProbes { plan.runtime = RuntimeProbePlan() }
        plans.withLock { [plan] in $0[path] = plan }
        return plan
    }

    func plan(for path: String) -> ImagePlan? { plans.withLock { $0[path] } }

    /// Analyses an image a child exec'd; false when it is not an ELF file launchprof can read.
    @discardableResult
    func analyse(_ path: String) -> Bool {
        guard plan(for: path) == nil, let image = try? ELFImage.read(path: path) else { return false }
        let closure = DependencyResolver.system().resolve(program: image, environment: environment)
        insert(ImagePlanner.plan(program: image, closure: closure), for: path)
        return true
    }
}
