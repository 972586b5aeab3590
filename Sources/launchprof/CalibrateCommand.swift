import ArgumentParser
import CLaunchprof
import LaunchprofCore
import LaunchprofAnalysis
import LaunchprofReport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `launchprof calibrate`: measures this host's loader unit costs and stores them for `inspect`.
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Measure what loader work costs on this host, for inspect's estimates.",
        discussion: """
            Examples:
              launchprof calibrate
              launchprof calibrate --check 'gdb --version' --report calibration

            Builds small synthetic programs with the system C compiler, launches them and some \
            system programs under the tracer, fits the cost model by least squares and stores it \
            in $XDG_CACHE_HOME/launchprof (default ~/.cache/launchprof), keyed by CPU model and \
            kernel. --check compares the new estimate (and the built-in one) with measurements of \
            other programs; --report writes that comparison as Markdown and SVG.

            \(ExitCause.summary([.success, .usage, .noInput, .unavailable, .software, .cannotCreate, .ioError, .interrupted], [.interrupted: "interrupted (Ctrl-C, SIGTERM): the launched program was killed, no calibration stored"]))
            """)

    @Option(name: .shortAndLong, help: "Measured launches per calibration program, spread over 10 interleaved rounds (the fit uses their median; 4 to 10000).", transform: { try OptionValue.count($0, 4...10_000, unit: "the number of runs") })
    var runs = 20

    @Option(
        name: .long,
        help: ArgumentHelp("A program to check the fitted model on, with its arguments (repeatable).", valueName: "'PROGRAM ARGS'"))
    var check: [String] = []

    @Option(name: .long, help: "Launches per --check program, in the calibration's interleaved rounds (their median, as `launchprof run` reports it; 3 to 10000).", transform: { try OptionValue.count($0, 3...10_000, unit: "the number of runs") })
    var checkRuns = 20

    @Option(name: .long, help: ArgumentHelp("Write DIR/calibration.md and DIR/calibration.svg (needs --check).", valueName: "DIR"))
    var report: String?

    @Flag(name: .long, help: "Print the calibration as JSON on stdout instead of text.")
    var json = false

    func validate() throws {
        guard runs >= 4 else { throw ValidationError("--runs must be at least 4 (the median of fewer is noise)") }
        guard checkRuns >= 3 else { throw ValidationError("--check-runs must be at least 3 (the median of fewer is noise)") }
        if report != nil && check.isEmpty { throw ValidationError("--report needs at least one --check program") }
        // Checked before the whole calibration, not after it.
        try OutputChecks.folder(report, option: "--report")
    }

    /// Set in the environment of the high-priority rerun (`lp_rerun_at_high_priority`).
    static let highPriorityMarker = "LAUNCHPROF_CALIBRATE_HIGH_PRIORITY"

    func run() throws {
        Self.runAtHighPriority()
        var environment = ProcessEnvironment.current()
        environment[Self.highPriorityMarker] = nil
        guard let store = CalibrationStore.user(environment: environment) else {
            throw CalibrationError.noCacheDirectory
        }
        var calibrator = Calibrator(environment: environment)
        calibrator.runs = runs
        let checks: [Calibrator.Probe] = check.compactMap { text in
            let words = text.split(separator: " ").map(String.init)
            guard let program = words.first else { return nil }
            let name = ([program.split(separator: "/").last.map(String.init) ?? program] + words.dropFirst())
                .joined(separator: " ")
            return Calibrator.Probe(name: name, path: program, arguments: Array(words.dropFirst()))
        }
        let comparison: CalibrationCheck
        let path: String
        do {
            let generator = try ProgramGenerator(directory: store.directory + "/programs")
            Terminal.write(2, "launchprof: building the synthetic programs in \(generator.directory)\n")
            // A system program whose closure cannot be loaded here (a missing library) is left out.
            let system = Calibrator.systemProbes().filter { (try? calibrator.work(of: $0)) != nil }
            let probes = try Calibrator.syntheticProbes(generator) + system
            // The --check programs are launched in the same interleaved rounds as the fit's.
            comparison = try calibrator.calibrate(probes, checks: checks, checkRuns: checkRuns) { point in
                Terminal.write(2, "launchprof: measured \(point.name): \(Self.duration(point.measuredNs))\n")
            }
            path = try store.save(comparison.calibration)
        } catch {
            // Ctrl-C or SIGTERM ends the measurement as a failed launch: say it was the signal.
            let signal = lp_interrupted()
            if signal != 0 {
                throw ExitCause.interrupted.fail("calibrate interrupted by signal \(signal): nothing was stored")
            }
            throw error
        }
        let calibration = comparison.calibration
        if let report {
            try ReportFiles.makeDirectory(report)
            for (name, text) in [("calibration.md", comparison.markdown()), ("calibration.svg", comparison.svg())] {
                try ReportFiles.write(Array(text.utf8), to: report + "/" + name)
            }
        }
        if json {
            Terminal.write(1, String(decoding: try calibrationJSON(calibration), as: UTF8.self))
        } else {
            Terminal.write(1, comparison.text(storedAt: path))
        }
    }

    private func calibrationJSON(_ calibration: HostCalibration) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(calibration)) + [UInt8(ascii: "\n")]
    }

    /// Where permitted, the measurement runs in a session of its own at nice -20 (see
    /// priority.c): a build beside it then disturbs its launches far less. This process waits
    /// for that rerun and ends as it did.
    static func runAtHighPriority() {
        if getenv(highPriorityMarker) != nil {
            Terminal.write(2, "launchprof: measuring at nice -20 in a scheduling group of its own, so other work on the machine disturbs the launches less\n")
            return
        }
        var status: Int32 = 0
        guard lp_rerun_at_high_priority(CommandLine.unsafeArgv, highPriorityMarker, &status) == 0 else { return }
        let signal = status & 0x7f
        if signal == 0 { Glibc.exit((status >> 8) & 0xff) }
        // Ended by a signal: end the same way, so a shell sees what happened.
        Glibc.signal(signal, SIG_DFL)
        raise(signal)
        Glibc.exit(128 + signal)
    }

    static func duration(_ ns: Int) -> String {
        DurationText.truncatedMilliseconds(ns, decimals: 1)
    }
}
