import LaunchprofELF
import LaunchprofAnalysis
import LaunchprofReport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `launchprof calibrate`: measures what loader work costs on this host. Each probe (a
/// synthetic closure built from source, or a system program) is counted from its ELF files
/// (`LoaderWorkAnalyzer`) and launched under the tracer as `launchprof run` does; the median of
/// `loader.map` + `loader.relocate` per probe feeds `CostModelFit`.
public struct Calibrator: Sendable {
    /// A program to measure.
    public struct Probe: Sendable, Equatable {
        public var name: String
        public var path: String
        public var arguments: [String]

        public init(name: String, path: String, arguments: [String] = []) {
            self.name = name
            self.path = path
            self.arguments = arguments
        }
    }

    /// Measured launches per probe (after `warmup` unrecorded ones per round).
    public var runs = 10
    public var warmup = 1
    /// The probes are measured in turn, a share of their runs per round, so that a busy spell
    /// of a shared machine falls on all of them alike instead of on one. Many short rounds rather
    /// than a few long ones: on a shared VM a whole `run` session can be 20-50% slower than the
    /// next (every phase of every launch in it), and with 4 rounds how many of a program's
    /// rounds fell in such spells decided its median more than its closure did.
    public var rounds = 10
    /// The environment the probes run in (launchprof's own, less what it runs under).
    public var environment: [String: String]

    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// Synthetic closures, each varying one kind of work: libraries (objects, segments),
    /// relative relocations packed and spread over pages (up to a million, as a browser's),
    /// lookups shallow and deep, lookups reading large symbol tables densely, sparsely and a page
    /// or two per read fault (pages and read faults apart from objects and from each other),
    /// lookups of long names, version requirements apart from objects. They are dropped from the
    /// page cache once built, so that they are read back as an installed program's files are
    /// (`ProgramGenerator.dropFromPageCache`). (The linker sorts symbolic relocations by symbol,
    /// so 12k relocations against 1,024 symbols cost 1,024 lookups and 11k answers from glibc's
    /// cache.)
    public static func syntheticProbes(_ generator: ProgramGenerator) throws(CalibrationError) -> [Probe] {
        let probes = [
            Probe(name: "synthetic: 1 library", path: try generator.libraries(1)),
            Probe(name: "synthetic: 16 libraries", path: try generator.libraries(16)),
            Probe(name: "synthetic: 48 libraries", path: try generator.libraries(48)),
            Probe(name: "synthetic: 60k relative relocations", path: try generator.relocations(60_000, symbolic: false)),
            Probe(name: "synthetic: 2k relocated pages", path: try generator.spreadPages(2_000)),
            Probe(name: "synthetic: 1k symbols, shallow", path: try generator.scopeWalk(lookups: 12_000, fillers: 0)),
            Probe(name: "synthetic: 1k symbols, 40 deeper", path: try generator.scopeWalk(lookups: 6_000, fillers: 40)),
            Probe(name: "synthetic: 1M packed relative relocations", path: try generator.packedRelocations(1_000_000)),
            Probe(
                name: "synthetic: 2k lookups in a 40k-symbol table",
                path: try generator.largeSymbolTable(symbols: 40_000, lookups: 2_000)),
            Probe(
                name: "synthetic: 300 lookups in a 200k-symbol table",
                path: try generator.largeSymbolTable(symbols: 200_000, lookups: 300)),
            // Node's regime: each lookup alone in its 64 KiB windows of the table, a read fault
            // for two or three pages read (the two above read 14 and 6 pages a fault), so the fit
            // can tell a fault's price from a page's.
            Probe(
                name: "synthetic: 64 lookups in a 200k-symbol table, a fault each",
                path: try generator.largeSymbolTable(symbols: 200_000, lookups: 64)),
            // C++ and Swift names: 2k lookups of 96 bytes a name, and the same of 16 (C names).
            Probe(
                name: "synthetic: 2k lookups of 16-byte names",
                path: try generator.longNames(lookups: 2_000, nameBytes: 16)),
            Probe(
                name: "synthetic: 2k lookups of 96-byte names",
                path: try generator.longNames(lookups: 2_000, nameBytes: 96)),
            Probe(name: "synthetic: 400 version requirements", path: try generator.versionRequirements(400)),
        ]
        // Read back as installed files are, a read fault a 64 KiB window (as counted).
        generator.dropFromPageCache()
        return probes
    }

    /// Programs Debian installs (most by `Scripts/setup.sh`), with arguments that make them
    /// exit at once; those missing on this host are left out. The programs the README checks the
    /// estimate on (gdb, git, node) are not among them, so that check is not a refit.
    public static func systemProbes() -> [Probe] {
        let candidates: [(String, [String])] = [
            ("/usr/bin/true", []), ("/usr/bin/ls", ["/"]), ("/usr/bin/perl", ["-e", "1"]),
            ("/usr/bin/python3", ["-c", "0"]), ("/usr/bin/curl", ["--version"]), ("/usr/bin/ssh", ["-V"]),
            ("/usr/bin/objdump", ["--version"]), ("/usr/bin/hyperfine", ["--version"]), ("/usr/bin/tar", ["--version"]),
            ("/usr/bin/go", ["version"]), ("/usr/bin/vim.basic", ["--version"]),
            // Larger closures (30-70 objects) where the desktop stack is installed.
            ("/usr/bin/perf", ["--version"]), ("/usr/bin/systemd-analyze", ["--version"]),
            ("/usr/bin/appstreamcli", ["--version"]), ("/usr/bin/memusagestat", ["--version"]),
            ("/usr/bin/gtk-launch", ["--version"]), ("/usr/bin/gtk4-demo", ["--version"]),
            // A large C++ closure (libLLVM: 100k+ relocations, a big symbol table).
            ("/usr/lib/llvm-14/bin/llvm-symbolizer", ["--version"]),
        ]
        return candidates.filter { access($0.0, X_OK) == 0 }.map { path, arguments in
            Probe(name: path.split(separator: "/").last.map(String.init) ?? path, path: path, arguments: arguments)
        }
    }

    /// The loader work of `probe`'s closure, counted from its files.
    public func work(of probe: Probe) throws(CalibrationError) -> LoaderWork {
        let session = InspectSession(configuration: .init(program: probe.path, environment: environment))
        do {
            let report = try session.run()
            guard report.program.usesLoader else {
                throw CalibrationError.measurementFailed(program: probe.path, reason: "it is statically linked: no loader runs")
            }
            guard report.missing.isEmpty else {
                throw CalibrationError.measurementFailed(
                    program: probe.path, reason: "libraries are missing: \(report.missing.map(\.name).joined(separator: ", "))")
            }
            return report.totals.loaderWork
        } catch let error as CalibrationError {
            throw error
        } catch {
            throw .measurementFailed(
                program: probe.path, reason: "\(error)", cause: (error as? any LaunchprofError)?.exitCause ?? .software)
        }
    }

    /// The median of `loader.map` + `loader.relocate` over `runs` launches of `probe`, in ns
    /// (what `launchprof run` reports).
    public func measure(_ probe: Probe) throws(CalibrationError) -> Int {
        Self.quantile(try samples(probe, runs: runs), 0.5)
    }

    /// `loader.map` + `loader.relocate` of each of `runs` launches of `probe`, in ns.
    public func samples(_ probe: Probe, runs: Int) throws(CalibrationError) -> [Int] {
        var configuration = RunConfiguration(program: probe.path, arguments: probe.arguments)
        configuration.runs = runs
        configuration.warmup = warmup
        configuration.inheritedEnvironment = environment
        configuration.readiness = .exit
        let runs = RunCollector()
        do throws(RunError) {
            let session = try RunSession(configuration: configuration)
            _ = try LaunchPipeline(session, sinks: [runs]).run()[0].get()
        } catch {
            throw .measurementFailed(program: probe.path, reason: error.description, cause: error.exitCause)
        }
        var samples: [Sample] = []
        for run in runs.runs {
            let map = run.phases.first { $0.name == "loader.map" }
            let relocate = run.phases.first { $0.name == "loader.relocate" }
            guard let map, let relocate else {
                let reasons = run.absent.map { "\($0.phase): \($0.reason)" }.joined(separator: "; ")
                throw .measurementFailed(
                    program: probe.path,
                    reason: "loader.map or loader.relocate was not observed (\(reasons.isEmpty ? "no loader phases" : reasons))")
            }
            samples.append(Sample(loaderNs: Int(map.durationNs + relocate.durationNs), readFromDisk: (run.majorFaults ?? 0) > 0))
        }
        let measured = Self.warm(samples)
        guard !measured.isEmpty else { throw .measurementFailed(program: probe.path, reason: "no run was measured") }
        return measured
    }

    /// Counts and measures every probe, calling `progress` after each with its point. A
    /// point's time is the median of its launches, what `launchprof run` reports and the
    /// estimate is compared with. (The lower quartile was steadier on a busy machine but sat
    /// 20-30% below the medians `run` then measures; `CostModelFit`'s reweighting keeps a probe
    /// a busy spell slowed from pulling the fit instead.)
    public func points(
        _ probes: [Probe], progress: (CostModelFit.Point) -> Void = { _ in }
    ) throws(CalibrationError) -> [CostModelFit.Point] {
        let works = try probes.map { (probe) throws(CalibrationError) in try work(of: probe) }
        let pooled = try interleavedSamples(probes)
        var points: [CostModelFit.Point] = []
        for (index, probe) in probes.enumerated() {
            let point = CostModelFit.Point(
                name: probe.name, work: works[index], measuredNs: Self.quantile(pooled[index], 0.5),
                runs: pooled[index].count)
            points.append(point)
            progress(point)
        }
        return points
    }

    /// `runs` samples per probe, taken a round at a time over all probes.
    private func interleavedSamples(_ probes: [Probe]) throws(CalibrationError) -> [[Int]] {
        try interleavedSamples(probes, runs: probes.map { _ in runs })
    }

    /// `runs[i]` samples of `probes[i]`, taken a round at a time over all probes.
    private func interleavedSamples(_ probes: [Probe], runs: [Int]) throws(CalibrationError) -> [[Int]] {
        var pooled = [[Int]](repeating: [], count: probes.count)
        let rounds = Self.roundCount(rounds, runs: runs)
        for round in 0..<rounds {
            for (index, probe) in probes.enumerated() {
                let share = Self.share(of: runs[index], inRound: round, of: rounds)
                if share > 0 { pooled[index] += try samples(probe, runs: share) }
            }
        }
        return pooled
    }

    /// As many rounds as asked for, but no more than the most launches any program needs (a
    /// round with nothing to launch would only repeat warm-ups).
    static func roundCount(_ rounds: Int, runs: [Int]) -> Int {
        max(1, min(rounds, runs.max() ?? 1))
    }

    /// The launches of a program with `runs` in round `round` of `rounds`: spread evenly, so
    /// that they add up to exactly `runs` and a program with fewer runs than rounds is
    /// launched in rounds across the whole calibration, not only in its first ones.
    static func share(of runs: Int, inRound round: Int, of rounds: Int) -> Int {
        runs * (round + 1) / rounds - runs * round / rounds
    }

    /// One launch's `loader.map` + `loader.relocate`, and whether it read pages from disk.
    struct Sample: Equatable {
        var loaderNs: Int
        var readFromDisk: Bool
    }

    /// The loader times the model is about: those of launches that ran from the page cache. The
    /// cost model is a warm one, and a launch that read pages from disk (a host reclaiming idle
    /// page cache) measures the disk. Where fewer than half the launches ran warm — a program
    /// that reads from disk every time, after `main` as much as before — all of them count, or
    /// there would be too few to take a median of.
    static func warm(_ samples: [Sample]) -> [Int] {
        let warm = samples.filter { !$0.readFromDisk }
        return (warm.count * 2 >= samples.count ? warm : samples).map(\.loaderNs)
    }

    /// The `fraction` quantile of `values` (linear between neighbours), 0 for none.
    static func quantile(_ values: [Int], _ fraction: Double) -> Int {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let position = fraction * Double(sorted.count - 1)
        let low = Int(position.rounded(.down))
        let high = min(low + 1, sorted.count - 1)
        let weight = position - Double(low)
        return Int((Double(sorted[low]) * (1 - weight) + Double(sorted[high]) * weight).rounded())
    }

    /// Measures `probes` and fits the host's cost model. A fit whose own programs disagree with
    /// it (`CalibrationCheck.disagreement`: a busy spell slowed some) is not returned: every
    /// program is measured again in as many more interleaved rounds, the samples pooled, and the
    /// model refitted — up to `passes` passes, then `.fitDisagrees`.
    ///
    /// `checks` (not fitted on) are launched `checkRuns` times in the same rounds as the
    /// probes, so that a busy spell of a shared machine slows the fit's programs and the checked
    /// ones alike: measured after the fit, a check compared a quiet fit with a busy moment (or
    /// the reverse) and missed by 20-50%.
    public func calibrate(
        _ probes: [Probe], checks: [Probe] = [], checkRuns: Int = 20, passes: Int = 3,
        progress: (CostModelFit.Point) -> Void = { _ in }
    ) throws(CalibrationError) -> CalibrationCheck {
        let started = Self.monotonicNs()
        let works = try probes.map { (probe) throws(CalibrationError) in try work(of: probe) }
        let checkWorks = try checks.map { (probe) throws(CalibrationError) in try work(of: probe) }
        let everyProgram = probes + checks
        let runCounts = probes.map { _ in runs } + checks.map { _ in checkRuns }
        var pooled = try interleavedSamples(everyProgram, runs: runCounts)
        var why = ""
        for pass in 1...max(passes, 1) {
            if pass > 1 {
                let more = try interleavedSamples(everyProgram, runs: runCounts)
                for index in pooled.indices { pooled[index] += more[index] }
            }
            let measured = probes.indices.map { index in
                CostModelFit.Point(
                    name: probes[index].name, work: works[index], measuredNs: Self.quantile(pooled[index], 0.5),
                    runs: pooled[index].count)
            }
            if pass == 1 { measured.forEach(progress) }
            guard
                let calibration = HostCalibration.fitted(
                    measured, host: HostInfo.current(), measuredAt: Self.utcTimestamp(), runsPerPoint: runs * pass,
                    durationNs: Self.monotonicNs() - started)
            else { throw .fitFailed(points: measured.count) }
            guard let disagreement = CalibrationCheck.disagreement(calibration.points) else {
                let rows = checks.indices.map { index in
                    let samples = pooled[probes.count + index]
                    return CalibrationCheck.Row(
                        name: checks[index].name, work: checkWorks[index], measuredNs: Self.quantile(samples, 0.5),
                        runs: samples.count, uncalibratedNs: LaunchCostModel.standard.estimateNs(checkWorks[index]),
                        calibratedNs: calibration.model.estimateNs(checkWorks[index]))
                }
                return CalibrationCheck(calibration: calibration, rows: rows)
            }
            why = disagreement
        }
        throw .fitDisagrees(why: why, passes: max(passes, 1))
    }

    static func monotonicNs() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec)
    }

    /// Now as "2026-11-23T17:50:00Z".
    public static func utcTimestamp() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
