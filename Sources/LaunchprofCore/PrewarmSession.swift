import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof prewarm`: launches a program ahead of use, freezes it (at `main` or before its
/// first hooked phase), holds it, resumes it as the user's tap and times the rest from the
/// resume; each such launch is paired with an ordinary launch of the same program. With a pool,
/// N frozen processes are kept ready and refilled after each launch.
///
/// The freeze is the tracer's own ptrace stop (`TraceFreeze`): nothing to clean up that ptrace
/// does not already clean up (PTRACE_O_EXITKILL kills a frozen child when launchprof dies, even
/// by SIGKILL), no signal the program could see, no cgroup delegation needed; its resume costs
/// about 14 µs more than a bare SIGCONT after the same hold (Benchmarks/RESULTS.md).
public final class PrewarmSession: LaunchSource, @unchecked Sendable {
    public let configuration: PrewarmConfiguration
    public let runSession: RunSession

    /// - Parameter tracer: what traces each launch; nil: the real `LaunchTracer`.
    public init(configuration: PrewarmConfiguration, tracer: (any LaunchTracing)? = nil) throws(RunError) {
        // The freeze is a ptrace stop at main: the ptrace observer's breakpoints hold it. (The
        // uprobe observer never stops the child, so it has no place to freeze it.)
        var configuration = configuration
        configuration.run.observer = .ptrace
        self.configuration = configuration
        runSession = try RunSession(configuration: configuration.run, tracer: tracer)
    }

    public var target: LaunchReport.Target { runSession.target }
    public var mode: LaunchReport.Mode {
        var mode = runSession.mode
        mode.prewarm = true
        // Not the user's choice: the freeze needs it (whatever --observer said).
        mode.observerReason = "prewarm: the freeze is the ptrace observer's stop at \(configuration.freezeAt == .main ? "main" : "the app's self-stop before willFinishLaunching")"
        return mode
    }

    /// What one frozen launch went through, filled in on its tracer's thread.
    final class FreezeRecord: @unchecked Sendable {
        var pid: Int32 = 0
        var spawnedAt: UInt64 = 0
        var stoppedAt: UInt64 = 0
        var resumedAt: UInt64 = 0
        var cpuBefore: UInt64 = 0
        var cpuAfter: UInt64 = 0
        var pss: UInt64?
        var frozen = false
        var expired = false
    }

    var plannedRuns: (runs: Int, warmup: Int) { (configuration.run.runs, configuration.run.warmup) }
    /// A pool's coordinator is not pinned: its slots launch on threads of their own.
    var pinsTracer: Bool { configuration.run.pinCPU && configuration.pool == 0 }

    /// The hazard scan's outcome (nil: not asked for, or no plan to scan with).
    private var scan: Result<[PrewarmHazard], TracerError>?
    /// With `--pool`: the pool's figures, once its launches are made.
    private var pool: PrewarmSummary.PoolSummary?

    /// The hazard scan, once, before the first timed launch (a bench's rounds share it).
    func prepare() {
        if configuration.scanHazards { scan = scanHazards() }
    }

    func amend(_ summary: inout LaunchSummary) {
        guard summary.prewarm != nil else { return }
        switch scan {
        case .success(let hazards):
            summary.prewarm?.hazards = hazards
            summary.prewarm?.prewarmSafe = PrewarmHazard.prewarmSafe(hazards)
        case .failure(let error):
            summary.prewarm?.hazardScanError = error.description
        case nil:
            break
        }
        if let pool { summary.prewarm?.pool = pool }
    }

    /// The batch's paired launches (or, with `--pool`, the pool's): each prewarmed launch
    /// combined with its ordinary one is the batch's run.
    func makeRuns(
        _ batch: LaunchBatch, context: LaunchContext, finished: (Int, MeasuredRun) throws(RunError) -> Void
    ) throws(RunError) {
        if configuration.pool > 0 {
            let pool = PrewarmPool(session: self)
            try pool.makeRuns(batch, context: context, finished: finished)
            self.pool = pool.summary
            return
        }
        var generator = SplitMix64(seed: configuration.seed)
        for launch in 0..<batch.count {
            let index = batch.index(of: launch)
            let holdNs = configuration.hold.draw(using: &generator)
            // Alternate which launch goes first, so neither always finds the caches warmer.
            var ordinary: LaunchRun?
            var prewarmed: (MeasuredRun, FreezeRecord)?
            for ordinaryTurn in index % 2 == 0 ? [true, false] : [false, true] {
                if lp_interrupted() != 0 { throw .interrupted(signal: lp_interrupted()) }
                if ordinaryTurn {
                    ordinary = try runSession.launchOnce(index: index, context: context).run
                } else {
                    prewarmed = try prewarmedLaunch(index: index, context: context, gate: .hold(ns: holdNs))
                }
            }
            if lp_interrupted() != 0 { throw .interrupted(signal: lp_interrupted()) }
            guard let (prewarmedRun, record) = prewarmed else { continue }
            var measured = prewarmedRun
            // Never frozen (it failed first): the run as it ended, no prewarm figures.
            if record.frozen {
                measured.run = try Self.combine(measured.run, record: record, ordinary: ordinary, freezeAt: configuration.freezeAt)
            }
            try finished(launch, measured)
        }
    }

    /// The hazard scan: one untimed launch to `main` before the timed ones, on its own thread.
    func scanHazards() -> Result<[PrewarmHazard], TracerError>? {
        guard let plan = runSession.firstImagePlan else { return nil }
        let environment = configuration.run.childEnvironment
        var request = HazardScanner.Request(
            executable: runSession.program.path,
            arguments: runSession.program.argv(configuration.run.arguments),
            environment: environment.map { "\($0.key)=\($0.value)" }.sorted() + ["ActivePrewarm=1"],
            plan: plan, home: environment["HOME"])
        request.workingDirectory = configuration.run.workingDirectory
        let scanRequest = request
        let thread = DedicatedThread { () -> Result<[PrewarmHazard], TracerError> in
            do throws(TracerError) {
                return .success(try HazardScanner().scan(scanRequest))
            } catch {
                return .failure(error)
            }
        }
        return thread.join()
    }

    /// Holds this long or longer are said on stderr as they start (`StatusLine`): a terminal that
    /// shows nothing for seconds looks hung, and a script can wait for the line instead of polling.
    static let announcedHoldNs: UInt64 = 1_000_000_000

    /// How a frozen launch waits for its resume.
    enum Gate {
        /// A fixed hold, then resume.
        case hold(ns: UInt64)
        /// Until the pool's coordinator opens it (a byte on this pipe: `g` go, `x` expire).
        case pipe(read: Int32, onFrozen: @Sendable (FreezeRecord) -> Void)
    }

    /// One prewarmed launch: spawned with `ActivePrewarm=1`, frozen, held, resumed, traced to its
    /// end. Throws when the program never reached the freeze point.
    func prewarmedLaunch(index: Int, context: LaunchContext, gate: Gate) throws(RunError) -> (MeasuredRun, FreezeRecord) {
        let record = FreezeRecord()
        let point: TraceFreeze.Point = configuration.freezeAt == .main ? .main : .selfStop
        let extra: UInt64
        switch gate {
        case .hold(let ns): extra = ns
        case .pipe: extra = configuration.ttlNs ?? 3_600_000_000_000
        }
        let freezeAt = configuration.freezeAt
        let freeze = TraceFreeze(point: point) { pid, spawnedAt, stoppedAt in
            record.pid = pid
            record.spawnedAt = spawnedAt
            record.stoppedAt = stoppedAt
            record.frozen = true
            record.cpuBefore = ProcessProbe.cpuNs(pid) ?? 0
            record.pss = ProcessProbe.pssBytes(pid)
            switch gate {
            case .hold(let ns):
                if ns >= Self.announcedHoldNs {
                    StatusLine.say("process \(pid) frozen at \(freezeAt.rawValue), held \(DurationText.text(ns))")
                }
                Self.wait(until: stoppedAt &+ ns, pipe: nil)
            case .pipe(let fd, let onFrozen):
                onFrozen(record)
                if Self.wait(until: .max, pipe: fd) == UInt8(ascii: "x") {
                    record.expired = true
                    kill(pid, SIGKILL)  // as iOS asks an unused prewarmed app to exit
                }
            }
            record.cpuAfter = ProcessProbe.cpuNs(pid) ?? record.cpuBefore
            record.resumedAt = lp_now_ns()
        }
        let measured = try runSession.launchOnce(
            index: index, context: context,
            customize: { request in
                request.environment.append("ActivePrewarm=1")
                if freezeAt == .willFinishLaunching {
                    request.environment.append("\(PrewarmConfiguration.freezeVariable)=willFinishLaunching")
                }
                request.freeze = freeze
            }, extraTimeoutNs: extra)
        let run = measured.run
        if lp_interrupted() != 0 { throw .interrupted(signal: lp_interrupted()) }
        // A program that failed before the freeze point is a failed prewarmed launch, reported
        // with its outcome; one that completed without stopping there cannot be frozen there.
        guard record.frozen || run.failed else {
            throw .notExecutable(
                path: runSession.program.path,
                reason: freezeAt == .main
                    ? "it never reached main, so it cannot be frozen there (\(run.absent.first { $0.phase == "main" }?.reason ?? "it ended first"))"
                    : "it never stopped before willFinishLaunching: freezing there needs the launch hooks (launchprof.h, LaunchprofApplication.main)")
        }
        return (measured, record)
    }

    /// Waits until `deadline` or a byte on `pipe`, waking for Ctrl-C. Returns the byte read.
    @discardableResult
    static func wait(until deadline: UInt64, pipe: Int32?) -> UInt8? {
        while lp_interrupted() == 0 {
            let now = lp_now_ns()
            if now >= deadline { return nil }
            let ms = Int32(clamping: min((deadline - now + 999_999) / 1_000_000, 50))
            var descriptor = pollfd(fd: pipe ?? -1, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, ms) > 0, let pipe {
                var byte: UInt8 = 0
                if read(pipe, &byte, 1) == 1 { return byte }
            }
        }
        return nil
    }

    /// The prewarmed run as reported: the user-driven metric from the resume, the prewarm part
    /// and the hold apart, the paired ordinary launch's figures and the saving, the states.
    static func combine(
        _ prewarmed: LaunchRun, record: FreezeRecord, ordinary: LaunchRun?,
        freezeAt: PrewarmConfiguration.FreezePoint
    ) throws(RunError) -> LaunchRun {
        var run = prewarmed
        let frozenAt = record.stoppedAt &- record.spawnedAt
        let resumeAt = record.resumedAt &- record.spawnedAt
        var prewarm = PrewarmRun(
            freezeAt: freezeAt.rawValue, prewarmNs: frozenAt, holdNs: record.resumedAt &- record.stoppedAt,
            resumeAtNs: resumeAt, frozenCPUNs: record.cpuAfter &- min(record.cpuAfter, record.cpuBefore),
            frozenPSSBytes: record.pss)
        let firstFrame = run.metrics.timeToFirstFrameNs
        if let firstFrame, firstFrame >= resumeAt {
            run.metrics.optimizedTimeToFirstFrameNs = firstFrame - resumeAt
        }
        // Timed from the spawn these would hold the hold: a prewarmed launch has only the
        // optimized metric (MetricKit files it apart the same way).
        run.metrics.timeToFirstFrameNs = nil
        run.metrics.extendedLaunchNs = nil
        if let ordinary {
            prewarm.pair(with: ordinary, optimizedTimeToFirstFrameNs: run.metrics.optimizedTimeToFirstFrameNs, prewarmedCompleted: !run.failed)
        }
        run.prewarm = prewarm
        var states = [LifecycleState(.notRunning, atNs: 0), LifecycleState(.prewarmed, atNs: frozenAt),
                      LifecycleState(.inactive, atNs: resumeAt)]
        if let firstFrame { states.append(LifecycleState(.active, atNs: firstFrame)) }
        if let exit = run.phases.last(where: { $0.name == "exit" }) {
            states.append(LifecycleState(.terminated, atNs: exit.startNs))
        }
        run.states = states
        return run
    }
}

/// A small seeded generator (SplitMix64), so random holds repeat with `--seed`.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension PrewarmRun {
    /// Records the ordinary launch this prewarmed one is compared with, and the saving: the
    /// ordinary time to first frame minus the prewarmed launch's from the resume.
    /// A pair in which either launch failed has no saving: a crash or a timeout is no launch.
    mutating func pair(with ordinary: LaunchRun, optimizedTimeToFirstFrameNs: UInt64?, prewarmedCompleted: Bool) {
        ordinaryPid = ordinary.pid
        ordinaryTimeToMainNs = ordinary.metrics.timeToMainNs
        ordinaryTimeToFirstFrameNs = ordinary.metrics.timeToFirstFrameNs
        ordinaryOutcome = ordinary.resolvedOutcome
        if prewarmedCompleted, !ordinary.failed, let before = ordinary.metrics.timeToFirstFrameNs,
            let after = optimizedTimeToFirstFrameNs
        {
            savingNs = Int64(before) - Int64(after)
        }
    }
}
