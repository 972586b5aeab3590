import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// The one loop every command that launches runs through (`run`, `prewarm` and its pool,
/// `bench`): it owns the warm-ups and the measured runs, the rounds a bench's launches take turns
/// in, the tracer's thread and the run monitor's, the summary, and cancellation (a failed
/// launch, Ctrl-C); each measured run goes to the entry's sinks as it finishes, as hyperfine's
/// scheduler hands results to its exporters.
///
///     command line → options → configuration → session (RunSession, PrewarmSession)
///       → LaunchPipeline(entries: [session + sinks]).run()
///           per round, per entry: warm-ups, then measured runs, each → every sink's record
///           at the end: summary (+ the session's own figures) → every sink's finish
///       → the command renders the StreamedLaunchReport (text) and the collected runs (exports)
///
/// What makes the launches is the session's (`LaunchSource`): one launch per run
/// (`RunSession`), a prewarmed launch paired with an ordinary one (`PrewarmSession`), a pool of
/// frozen processes (`PrewarmPool`).
public final class LaunchPipeline {
    /// One stream of launches and where its measured runs go.
    public struct Entry {
        /// A bench launch's name (for messages), empty for `run` and `prewarm`.
        public var name: String
        let source: any LaunchSource
        public var sinks: [any LaunchRunSink]

        public init(name: String = "", session: RunSession, sinks: [any LaunchRunSink]) {
            self.init(name: name, source: session, sinks: sinks)
        }

        public init(name: String = "", session: PrewarmSession, sinks: [any LaunchRunSink]) {
            self.init(name: name, source: session, sinks: sinks)
        }

        init(name: String, source: any LaunchSource, sinks: [any LaunchRunSink]) {
            self.name = name
            self.source = source
            self.sinks = sinks
        }
    }

    public let entries: [Entry]
    /// Rounds the entries take turns in: each round makes its share of every entry's runs
    /// (warm-ups in the first), so a change of the machine's load lands on all of them alike.
    public let rounds: Int
    /// Ctrl-C or SIGTERM keeps what was measured: each entry's sinks finish with the runs made
    /// until then (the launch it ended among them, showing what the program had reached), `run()`
    /// returns those reports and `interruption` says what stopped it. Otherwise (bench, calibrate)
    /// every sink is cancelled and `run()` throws.
    public var finishesOnInterruption = false
    /// The interruption that stopped `run()` early, with `finishesOnInterruption`.
    public private(set) var interruption: RunError?

    public init(entries: [Entry], rounds: Int = 1) {
        self.entries = entries
        self.rounds = max(1, rounds)
    }

    public convenience init(_ session: RunSession, sinks: [any LaunchRunSink]) {
        self.init(entries: [Entry(session: session, sinks: sinks)])
    }

    public convenience init(_ session: PrewarmSession, sinks: [any LaunchRunSink]) {
        self.init(entries: [Entry(session: session, sinks: sinks)])
    }

    /// A new session's id: 128 random bits in hex, so two benches' rounds are never taken for one's.
    static func sessionID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Makes every entry's runs. Returns each entry's report, or the error that ended it (its
    /// sinks cancelled; the other entries go on). Throws only when the whole pipeline stops:
    /// Ctrl-C or SIGTERM (every sink cancelled, nothing half-written left behind; with
    /// `finishesOnInterruption` the runs so far are kept instead), or the monitor's thread cannot
    /// be made.
    public func run() throws(RunError) -> [Result<StreamedLaunchReport, RunError>] {
        lp_install_interrupt_handler()
        lp_spawn_prepare()
        let host = HostInfo.current()
        let states = entries.map { EntryState($0) }
        for state in states {
            state.attempt { () throws(RunError) in
                for sink in state.entry.sinks {
                    try sink.begin(target: state.entry.source.target, host: host, mode: state.entry.source.mode)
                }
                state.entry.source.prepare()
            }
        }
        // Pinned when every entry wants it (not a pool's coordinator: its slots launch on their
        // own threads), starting on the CPU this thread is on.
        let pinned = entries.allSatisfy(\.source.pinsTracer)
        let cpus = pinned ? LaunchContext.rotation(startingAt: DedicatedThread<Int>.currentCPU) : []
        let cpu = cpus.first
        let monitorThread: MonitorThread
        do throws(RunError) {
            monitorThread = try MonitorThread()
        } catch {
            for state in states { state.fail(error) }
            throw error
        }
        let context = LaunchContext(cpus: cpus, monitorThread: monitorThread)
        let rounds = rounds
        // Runs made in rounds carry the session and round, so `compare` can pair two launches'
        // runs of one round; a single round has no interleaving to pair on.
        let session = rounds > 1 ? Self.sessionID() : nil
        // The sinks and states are used by the tracer's thread only while this one waits in join().
        nonisolated(unsafe) let schedule = states
        let tracer = DedicatedThread(pinnedCPU: cpu) { () -> RunError? in
            for round in 0..<rounds {
                // Every other round in the reverse order (A B, B A, …): in a round the launch
                // after another finds its caches warmer (2% for one program at two paths), and
                // neither side of a comparison may always be the second.
                for state in round % 2 == 0 ? schedule : schedule.reversed() where state.failure == nil {
                    if lp_interrupted() != 0 { return .interrupted(signal: lp_interrupted()) }
                    if let interruption = state.makeRuns(round: round, of: rounds, session: session, context: context) {
                        return interruption
                    }
                }
            }
            return nil
        }
        let interruption = tracer.join()
        monitorThread.stop()
        if let interruption {
            self.interruption = interruption
            for state in states where !finishesOnInterruption || state.recorded == 0 { state.fail(interruption) }
            guard finishesOnInterruption else { throw interruption }
        }
        return states.map { state in
            if let failure = state.failure { return .failure(failure) }
            let report = state.report(host: host)
            state.attempt { () throws(RunError) in
                for sink in state.entry.sinks { try sink.finish(report) }
            }
            return state.failure.map { .failure($0) } ?? .success(report)
        }
    }
}

/// The launches of one pipeline call, for a `LaunchSource`: `warmups` launches not reported,
/// then `runs` measured ones numbered from `firstIndex`.
struct LaunchBatch {
    var warmups: Int
    var runs: Int
    var firstIndex: Int

    var count: Int { warmups + runs }
    func isWarmup(_ launch: Int) -> Bool { launch < warmups }
    /// The run index of launch `launch` of the batch (negative for a warm-up).
    func index(of launch: Int) -> Int { firstIndex + launch - warmups }
}

/// What the pipeline provides every launch: the CPUs the tracer and the child are pinned to until
/// `main` (none: not pinned) and the run monitor's thread.
///
/// Run `i` is pinned to `cpus[i % cpus.count]`, so the runs take turns on every CPU launchprof may
/// use, and run `i` of every launch of a bench suite (one round of `--rounds`) is on the same CPU.
/// One CPU for a whole session made the session the unit of noise: on a 2-vCPU VM whose second
/// vCPU takes every disk interrupt, sessions pinned to one CPU measured time to main 1.3 ms and
/// sessions pinned to the other 1.8 ms (medians of four sessions each, every phase slower), more
/// than a real 10% change (docs/ci-regressions.md, "Why two sessions differ").
struct LaunchContext: Sendable {
    var cpus: [Int32]
    var monitorThread: MonitorThread

    /// The CPU run `index` is pinned to (warm-ups have negative indices); nil when not pinned.
    func pinnedCPU(forRun index: Int) -> Int32? {
        guard !cpus.isEmpty else { return nil }
        let count = cpus.count
        return cpus[(index % count + count) % count]
    }

    /// The CPUs this thread may use, from `first` on and around.
    static func rotation(startingAt first: Int32) -> [Int32] {
        var allowed = [Int32](repeating: 0, count: 1024)
        let count = Int(lp_allowed_cpus(&allowed, Int32(allowed.count)))
        let cpus = Array(allowed.prefix(count))
        guard let start = cpus.firstIndex(of: first) else { return first >= 0 ? [first] : [] }
        return Array(cpus[start...] + cpus[..<start])
    }
}

/// What makes a pipeline entry's launches.
protocol LaunchSource: AnyObject {
    var target: LaunchReport.Target { get }
    var mode: LaunchReport.Mode { get }
    /// Measured runs and warm-ups asked for in all.
    var plannedRuns: (runs: Int, warmup: Int) { get }
    /// Whether the pipeline's tracer thread should be pinned (`--no-pin` says not).
    var pinsTracer: Bool { get }
    /// Work before the first launch, once (prewarm: the hazard scan).
    func prepare()
    /// Makes the batch's launches on the calling thread (the pipeline's tracer thread), handing
    /// each finished one, in order, to `finished` with its place in the batch.
    func makeRuns(
        _ batch: LaunchBatch, context: LaunchContext, finished: (Int, MeasuredRun) throws(RunError) -> Void
    ) throws(RunError)
    /// The session's own figures in the summary (prewarm: the hazards, the pool's figures).
    func amend(_ summary: inout LaunchSummary)
}

extension LaunchSource {
    func prepare() {}
    func amend(_ summary: inout LaunchSummary) {}
}

/// One entry as the pipeline runs it: its summary so far, its last run, how far it got, or
/// what ended it.
private final class EntryState {
    let entry: LaunchPipeline.Entry
    var builder = LaunchSummaryBuilder()
    var lastRun: LaunchRun?
    var recorded = 0
    var launched = 0
    var failure: RunError?

    init(_ entry: LaunchPipeline.Entry) { self.entry = entry }

    /// Runs `body` unless the entry failed already; a failure ends the entry.
    func attempt(_ body: () throws(RunError) -> Void) {
        guard failure == nil else { return }
        do throws(RunError) {
            try body()
        } catch {
            fail(error)
        }
    }

    func fail(_ error: RunError) {
        guard failure == nil else { return }
        failure = error
        for sink in entry.sinks { sink.cancel() }
    }

    /// This entry's share of round `round`: its runs spread evenly over the rounds, its warm-ups
    /// in the first. Returns the interruption that stops the whole pipeline, if one did.
    func makeRuns(round: Int, of rounds: Int, session: String?, context: LaunchContext) -> RunError? {
        let (runs, warmup) = entry.source.plannedRuns
        let batch = LaunchBatch(
            warmups: round == 0 ? warmup : 0, runs: runs / rounds + (round < runs % rounds ? 1 : 0),
            firstIndex: recorded)
        guard batch.count > 0 else { return nil }
        let total = runs + warmup
        do throws(RunError) {
            try entry.source.makeRuns(batch, context: context) { launch, measured throws(RunError) in
                if !batch.isWarmup(launch) {
                    var measured = measured
                    if let session {
                        measured.run.session = session
                        measured.run.round = round
                    }
                    builder.add(measured.run)
                    lastRun = measured.run
                    recorded += 1
                    for sink in entry.sinks { try sink.record(measured) }
                }
                launched += 1
                for sink in entry.sinks { sink.progress(done: launched, total: total) }
            }
        } catch {
            if case .interrupted = error { return error }
            fail(error)
        }
        return nil
    }

    func report(host: LaunchReport.Host) -> StreamedLaunchReport {
        var summary = builder.summary
        entry.source.amend(&summary)
        return StreamedLaunchReport(
            target: entry.source.target, host: host, mode: entry.source.mode, summary: summary, lastRun: lastRun)
    }
}
