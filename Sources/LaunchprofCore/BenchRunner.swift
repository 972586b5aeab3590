import LaunchprofAnalysis
import LaunchprofReport

#if canImport(Glibc)
    import Glibc
#endif

/// `launchprof bench`: makes each launch of a suite with a `RunSession` or, for `mode: prewarm`, a
/// `PrewarmSession` (as `run --json` and `prewarm --json` do), inspects its program for the
/// deterministic counts, and writes one LaunchReport per launch plus `suite.json` into the output
/// folder.
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
        /// When its first launch began (its MetricKit payloads' window), seconds since the epoch.
        public var beganAtSeconds: Int64 = 0

        /// What went wrong, to say on stderr: the error that ended the launch, or its failed runs.
        public var problem: String? {
            if let error = entry.error { return "\(entry.name): \(error)" }
            return entry.failedRuns > 0 ? "\(entry.name): \(entry.failedRuns) of \(entry.runs) runs failed" : nil
        }
    }

    public init(
        suite: BenchSuite, outputDirectory: String, inheritedEnvironment: [String: String] = ProcessEnvironment.current()
    ) {
        self.suite = suite
        self.outputDirectory = outputDirectory
        self.inheritedEnvironment = inheritedEnvironment
    }

    /// Runs every launch through one `LaunchPipeline`, each into its report file and kept for
    /// the comparison, plus `sinks(launch)` (the terminal's progress). With `rounds` > 1 the
    /// launches take turns: each round makes its share of every launch's runs (warm-ups in the
    /// first), so a change of the machine's load lands on all of them alike — put a base and a
    /// new build in one suite, and compare their reports. A launch that fails is recorded (with
    /// its error, and no report file, not even a stale one) and the others still run; only an
    /// interruption (Ctrl-C) or an unwritable folder stops the suite.
    public func run(
        rounds: Int = 1, sinks: (BenchSuite.Launch) -> [any LaunchRunSink] = { _ in [] }
    ) throws(RunError) -> (summary: BenchSummary, outcomes: [Outcome]) {
        try RunError.reporting { () throws(LaunchReportError) in try ReportFiles.makeDirectory(outputDirectory) }
        var outcomes: [Outcome] = []
        var entries: [(outcome: Int, entry: LaunchPipeline.Entry, collector: RunCollector)] = []
        for launch in suite.launches {
            let path = reportPath(launch)
            var entry = BenchSummary.Entry(
                name: launch.name, report: nil, counts: nil, mode: launch.mode.rawValue, runs: 0, failedRuns: 0,
                thresholds: launch.thresholds, minEffectPercent: launch.minEffectPercent, minEffectNs: launch.minEffectNs)
            let configuration = configuration(launch)
            do throws(RunError) {
                let source: any LaunchSource
                let program: LocatedProgram
                switch launch.mode {
                case .warm, .cold:
                    let session = try RunSession(configuration: configuration)
                    (source, program) = (session, session.program)
                case .prewarm:
                    var prewarm = PrewarmConfiguration(run: configuration)
                    prewarm.hold = launch.hold
                    let session = try PrewarmSession(configuration: prewarm)
                    (source, program) = (session, session.runSession.program)
                }
                // The counts come from the same file the runs launch, in the child's environment.
                let inspection = InspectSession(
                    configuration: InspectConfiguration(program: program.path, environment: configuration.childEnvironment))
                entry.counts = (try? inspection.run()).map(LaunchCounts.init)
                let collector = RunCollector()
                let launchSinks: [any LaunchRunSink] = [StreamingReportSink(path: path), collector] + sinks(launch)
                entries.append((outcomes.count, .init(name: launch.name, source: source, sinks: launchSinks), collector))
            } catch {
                Self.fail(&entry, error, removing: path)
            }
            outcomes.append(Outcome(entry: entry, report: nil, program: launch.program))
        }
        let results = try LaunchPipeline(entries: entries.map(\.entry), rounds: rounds).run()
        for ((index, _, collector), result) in zip(entries, results) {
            switch result {
            case .success(let report):
                outcomes[index].entry.report = outcomes[index].entry.name + ".json"
                outcomes[index].entry.runs = report.summary.runs
                outcomes[index].entry.failedRuns = report.summary.failedRuns
                outcomes[index].report = collector.report
                outcomes[index].beganAtSeconds = collector.beganAtSeconds
            case .failure(let error):
                Self.fail(&outcomes[index].entry, error, removing: reportPath(suite.launches[index]))
            }
        }
        let summary = BenchSummary(suite: suite.path, entries: outcomes.map(\.entry), settings: suite.settings)
        try RunError.reporting { () throws(LaunchReportError) in
            try ReportFiles.write(try summary.encoded(), to: outputDirectory + "/suite.json")
        }
        return (summary, outcomes)
    }

    private func reportPath(_ launch: BenchSuite.Launch) -> String {
        outputDirectory + "/" + launch.name + ".json"
    }

    /// The launch cannot be made: no report, and no stale one from an earlier bench may pass for it.
    private static func fail(_ entry: inout BenchSummary.Entry, _ error: RunError, removing path: String) {
        unlink(path)
        entry.error = error.description
    }

    /// Refuses a suite naming a program that is not there, before any launch, with the code
    /// `run` and `inspect` give it (a relative path with a folder is left to the launch: it may
    /// be relative to its cwd).
    public func refuseMissingPrograms() throws(BenchError) {
        for launch in suite.launches where launch.program.hasPrefix("/") || !launch.program.contains("/") {
            do throws(RunError) {
                _ = try ProgramLocator.locate(launch.program, environment: inheritedEnvironment.merging(launch.environment) { $1 })
            } catch {
                if error.exitCause == .noInput { throw .missingProgram(launch: launch.name, error) }
            }
        }
    }

    /// A threshold on a quantity none of a launch's runs has (`phase:nosuch`) would check
    /// nothing: refused, naming what the launch has. Checked on the measured reports, because an
    /// app's hooked phases are known only once it ran.
    public static func refuseUnknownPhases(_ outcomes: [Outcome]) throws(BenchError) {
        var problems: [String] = []
        for outcome in outcomes {
            guard let report = outcome.report else { continue }
            let keys = Set(report.samples().map(\.key))
            for key in outcome.entry.thresholds.keys.sorted() where key.hasPrefix("phase:") && !keys.contains(key) {
                let phases = keys.filter { $0.hasPrefix("phase:") }.map { String($0.dropFirst(6)) }.sorted()
                problems.append(
                    "\(outcome.entry.name): a threshold on '\(key)', a phase this launch does not have; its phases: \(phases.joined(separator: ", "))")
            }
        }
        guard problems.isEmpty else { throw .unknownPhases(problems) }
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
