import LaunchprofReport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `launchprof bench`: makes each launch of a suite with a `RunSession` (as `run --json` does),
/// inspects its program for the deterministic counts, and writes one LaunchReport per launch
/// plus `suite.json` into the output folder.
public struct BenchRunner: Sendable {
    public let suite: BenchSuite
    public let outputDirectory: String
    /// launchprof's own environment, the base of every child's.
    public let inheritedEnvironment: [String: String]

    /// What one launch produced: its report (with runs) unless it could not be made at all.
    public struct Outcome: Sendable {
        public var entry: BenchSummary.Entry
        public var report: LaunchReport?
        /// The program as the suite names it.
        public var program: String
    }

    /// (launch name, runs done including warm-ups, total) after each run.
    public typealias Progress = @Sendable (String, Int, Int) -> Void

    public init(suite: BenchSuite, outputDirectory: String, inheritedEnvironment: [String: String]) {
        self.suite = suite
        self.outputDirectory = outputDirectory
        self.inheritedEnvironment = inheritedEnvironment
    }

    /// Runs every launch. With `rounds` > 1 the launches take turns: each round makes its
    /// share of every launch's runs (warm-ups in the first), so a change of the machine's load
    /// lands on all of them alike — put a base and a new build in one suite, and compare their
    /// reports. A launch that fails is recorded (with its error) and the others still run; only
    /// an interruption (Ctrl-C) or an unwritable folder stops the suite.
    public func run(rounds: Int = 1, progress: Progress? = nil) throws(RunError) -> (summary: BenchSummary, outcomes: [Outcome]) {
        do throws(LaunchReportError) {
            try ReportFiles.makeDirectory(outputDirectory)
        } catch {
            throw .report(error)
        }
        let states = suite.launches.map { LaunchState(launch: $0, runner: self) }
        defer { for state in states { state.abandon() } }
        let rounds = max(1, rounds)
        for round in 0..<rounds {
            for state in states {
                try state.runRound(round, of: rounds, progress: progress)
            }
        }
        let outcomes = states.map { $0.finish() }
        let summary = BenchSummary(suite: suite.path, entries: outcomes.map(\.entry), settings: suite.settings)
        do throws(LaunchReportError) {
            try ReportFiles.write(try summary.encoded(), to: outputDirectory + "/suite.json")
        } catch {
            throw .report(error)
        }
        return (summary, outcomes)
    }

    /// The folder of the suite file, against which relative paths in it resolve.
    var suiteDirectory: String {
        guard let slash = suite.path.lastIndex(of: "/") else { return "." }
        return slash == suite.path.startIndex ? "/" : String(suite.path[..<slash])
    }

    /// A path from the suite: absolute as is, relative to the suite's folder when it has a
    /// slash; a bare name stays a name (looked up in PATH).
    func resolve(_ path: String) -> String {
        path.hasPrefix("/") || !path.contains("/") ? path : suiteDirectory + "/" + path
    }

    func configuration(_ launch: BenchSuite.Launch) -> RunConfiguration {
        var configuration = RunConfiguration(program: resolve(launch.program), arguments: launch.arguments)
        configuration.runs = launch.runs
        configuration.warmup = launch.warmup
        configuration.readiness = launch.ready
        configuration.timeoutNs = launch.timeoutNs
        configuration.inheritedEnvironment = inheritedEnvironment
        configuration.environment = launch.environment
        configuration.workingDirectory = launch.cwd.map { $0.contains("/") || $0 == "." || $0 == ".." ? resolve($0) : suiteDirectory + "/" + $0 }
        launch.mode.apply(to: &configuration)
        return configuration
    }
}

/// One launch of a bench, across its rounds: its session and report writer, the runs so far,
/// or the error that ended it.
private final class LaunchState {
    let launch: BenchSuite.Launch
    let path: String
    var entry: BenchSummary.Entry
    var session: BenchSession?
    var writer: LaunchReportWriter?
    var recorded = 0

    init(launch: BenchSuite.Launch, runner: BenchRunner) {
        self.launch = launch
        let file = launch.name + ".json"
        path = runner.outputDirectory + "/" + file
        entry = BenchSummary.Entry(
            name: launch.name, report: nil, counts: nil, mode: launch.mode.rawValue, runs: 0, failedRuns: 0,
            thresholds: launch.thresholds, minEffectPercent: launch.minEffectPercent, minEffectNs: launch.minEffectNs)
        let configuration = runner.configuration(launch)
        do throws(RunError) {
            let session = try BenchSession(launch: launch, configuration: configuration)
            // The counts come from the same file the runs launch, in the child's environment.
            let inspection = InspectSession(
                configuration: InspectConfiguration(
                    program: session.program.path, environment: configuration.childEnvironment))
            entry.counts = (try? inspection.run()).map(LaunchCounts.init)
            var mode = session.mode
            mode.runs = launch.runs
            mode.warmup = launch.warmup
            do throws(LaunchReportError) {
                writer = try LaunchReportWriter(path: path, target: session.target, host: HostInfo.current(), mode: mode)
            } catch {
                throw .report(error)
            }
            self.session = session
        } catch {
            fail(error)
        }
    }

    /// This launch's share of round `round`: its runs spread evenly over the rounds.
    func runRound(_ round: Int, of rounds: Int, progress: BenchRunner.Progress?) throws(RunError) {
        guard let session, let writer else { return }
        let runs = launch.runs / rounds + (round < launch.runs % rounds ? 1 : 0)
        guard runs > 0 else { return }
        let warmup = round == 0 ? launch.warmup : 0
        // The session's own indices restart every round: runs are collected, then numbered here.
        let collector = RunCollector()
        let scratch: LaunchReportWriter
        do throws(LaunchReportError) {
            scratch = try LaunchReportWriter(
                output: DiscardingReportOutput(), target: session.target, host: HostInfo.current(), mode: session.mode)
        } catch {
            throw .report(error)
        }
        let name = launch.name
        let before = recorded
        let total = launch.runs + launch.warmup
        let warmupsBefore = round == 0 ? 0 : launch.warmup
        do throws(RunError) {
            _ = try session.run(
                into: scratch, runs: runs, warmup: warmup,
                progress: { done, _ in progress?(name, warmupsBefore + before + done, total) },
                onRun: { collector.add($0) })
            // A prewarm session adds its hazard scan to the summary: the report's writer too.
            writer.amendSummary = scratch.amendSummary
            for var run in collector.runs {
                run.index = recorded
                recorded += 1
                try writer.record(run)
            }
        } catch {
            if case .interrupted = error { throw error }
            fail(error)
        }
    }

    /// Finishes the report and reads it back (the comparison needs its runs).
    func finish() -> BenchRunner.Outcome {
        guard let writer else { return BenchRunner.Outcome(entry: entry, report: nil, program: launch.program) }
        self.writer = nil
        do throws(LaunchReportError) {
            try writer.finish()
            let report = try ReportFiles.readReport(path)
            entry.report = launch.name + ".json"
            entry.runs = report.summary.runs
            entry.failedRuns = report.summary.failedRuns
            return BenchRunner.Outcome(entry: entry, report: report, program: launch.program)
        } catch {
            fail(.report(error))
            return BenchRunner.Outcome(entry: entry, report: nil, program: launch.program)
        }
    }

    /// The launch cannot be made: no report, and no stale one from an earlier bench may pass for it.
    func fail(_ error: RunError) {
        writer?.cancel()
        writer = nil
        session = nil
        unlink(path)
        entry.error = error.description
    }

    /// Drops an unfinished report (after an interruption).
    func abandon() {
        writer?.cancel()
        writer = nil
    }
}

/// What makes a bench launch's runs: a run session, or for `mode: prewarm` a prewarm session
/// (which pairs every prewarmed launch with an ordinary one) around one.
enum BenchSession {
    case run(RunSession)
    case prewarm(PrewarmSession)

    init(launch: BenchSuite.Launch, configuration: RunConfiguration) throws(RunError) {
        switch launch.mode {
        case .warm, .cold:
            self = .run(try RunSession(configuration: configuration))
        case .prewarm:
            var prewarm = PrewarmConfiguration(run: configuration)
            prewarm.hold = launch.hold
            self = .prewarm(try PrewarmSession(configuration: prewarm))
        }
    }

    var runSession: RunSession {
        switch self {
        case .run(let session): session
        case .prewarm(let session): session.runSession
        }
    }

    var target: LaunchReport.Target { runSession.target }
    /// A prewarm session's own mode: it says prewarm, and why its observer is ptrace.
    var mode: LaunchReport.Mode {
        switch self {
        case .run(let session): session.mode
        case .prewarm(let session): session.mode
        }
    }
    var program: LocatedProgram { runSession.program }

    func run(
        into writer: LaunchReportWriter, runs: Int, warmup: Int, progress: RunSession.Progress?,
        onRun: @escaping @Sendable (LaunchRun) -> Void
    ) throws(RunError) -> LaunchRun? {
        switch self {
        case .run(let session):
            try session.run(into: writer, runs: runs, warmup: warmup, progress: progress, onRun: onRun)
        case .prewarm(let session):
            try session.run(into: writer, runs: runs, warmup: warmup, progress: progress, onRun: onRun)
        }
    }
}

/// Runs handed over from the tracer's thread.
private final class RunCollector: @unchecked Sendable {
    private let lock = Mutex<[LaunchRun]>([])

    func add(_ run: LaunchRun) {
        lock.withLock { $0.append(run) }
    }

    var runs: [LaunchRun] {
        lock.withLock { $0 }
    }
}
