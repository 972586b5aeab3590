import LaunchprofReport

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
    }

    /// (launch name, runs done including warm-ups, total) after each run.
    public typealias Progress = @Sendable (String, Int, Int) -> Void

    public init(suite: BenchSuite, outputDirectory: String, inheritedEnvironment: [String: String]) {
        self.suite = suite
        self.outputDirectory = outputDirectory
        self.inheritedEnvironment = inheritedEnvironment
    }

    /// Runs every launch in order. A launch that fails is recorded (with its error) and the
    /// others still run; only an interruption (Ctrl-C) or an unwritable folder stops the suite.
    public func run(progress: Progress? = nil) throws(RunError) -> (summary: BenchSummary, outcomes: [Outcome]) {
        do throws(LaunchReportError) {
            try ReportFiles.makeDirectory(outputDirectory)
        } catch {
            throw .report(error)
        }
        var outcomes: [Outcome] = []
        for launch in suite.launches {
            outcomes.append(try run(launch, progress: progress))
        }
        let summary = BenchSummary(suite: suite.path, entries: outcomes.map(\.entry), settings: suite.settings)
        do throws(LaunchReportError) {
            try ReportFiles.writeAtomically(try summary.encoded(), to: outputDirectory + "/suite.json")
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

    private func run(_ launch: BenchSuite.Launch, progress: Progress?) throws(RunError) -> Outcome {
        let file = launch.name + ".json"
        let path = outputDirectory + "/" + file
        var entry = BenchSummary.Entry(
            name: launch.name, report: nil, counts: nil, mode: launch.mode.rawValue, runs: 0, failedRuns: 0,
            thresholds: launch.thresholds)
        let configuration = configuration(launch)
        let session: RunSession
        do {
            session = try RunSession(configuration: configuration)
        } catch {
            if case .interrupted = error { throw error }
            // No stale report from an earlier bench may pass for this one.
            unlink(path)
            entry.error = error.description
            return Outcome(entry: entry, report: nil)
        }
        // The counts come from the same file the runs launch, in the child's environment.
        let inspection = InspectSession(
            configuration: InspectConfiguration(program: session.program.path, environment: configuration.childEnvironment))
        entry.counts = (try? inspection.run()).map(LaunchCounts.init)
        let report: LaunchReport
        do throws(RunError) {
            let writer: LaunchReportWriter
            do throws(LaunchReportError) {
                writer = try LaunchReportWriter(
                    path: path, target: session.target, host: HostInfo.current(), mode: session.mode)
            } catch {
                throw .report(error)
            }
            do throws(RunError) {
                _ = try session.run(into: writer, progress: { done, total in progress?(launch.name, done, total) })
            } catch {
                writer.cancel()
                throw error
            }
            do throws(LaunchReportError) {
                try writer.finish()
                report = try ReportFiles.readReport(path)
            } catch {
                throw .report(error)
            }
        } catch {
            if case .interrupted = error { throw error }
            unlink(path)
            entry.error = error.description
            return Outcome(entry: entry, report: nil)
        }
        entry.report = file
        entry.runs = report.summary.runs
        entry.failedRuns = report.summary.failedRuns
        return Outcome(entry: entry, report: report)
    }
}
