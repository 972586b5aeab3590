import ArgumentParser
import LaunchprofCore
import LaunchprofAnalysis
import LaunchprofReport

/// `launchprof run|prewarm --sample[=RATE] [--all-threads] [--flag-threshold MS] [--folded FILE]`.
struct SamplingOptions: ParsableArguments {
    /// `--sample`, `--sample=RATE` or `--sample RATE`. A word that is no rate is not taken as
    /// one (the parser falls back to the default), so `--sample PROGRAM` works; a malformed
    /// `--sample=RATE` is refused before parsing (`CommandOptions.refuseBadSampleRate`).
    @Option(
        name: .customLong("sample"), defaultAsFlag: SamplingConfiguration.defaultRateHz, parsing: .next,
        help: ArgumentHelp(
            "Sample the main thread from spawn to readiness at RATE samples per second of CPU time (default \(SamplingConfiguration.defaultRateHz)): stacks, thread state, flags of heavy work, call stack trees.",
            valueName: "rate"))
    var sample: Int? = nil

    @Flag(help: "With --sample: sample every thread, not only the main one.")
    var allThreads = false

    @Option(
        help: ArgumentHelp(
            "With --sample: flag a function with at least this many ms of on-CPU or blocked main-thread time in one phase (default \(SamplingConfiguration.defaultFlagThresholdNs / 1_000_000)).",
            valueName: "ms"), transform: { try OptionValue.milliseconds($0, positive: true) })
    var flagThreshold: Double?

    @Option(help: ArgumentHelp("With --sample: write folded stacks of every run (flamegraph.pl, inferno, speedscope).", valueName: "file"))
    var folded: String?

    func validate() throws {
        if let sample {
            do {
                _ = try OptionValue.rate(String(sample))
            } catch {
                throw ValidationError("--sample=\(sample): \(error).")
            }
        }
        if sample == nil {
            for (set, name) in [(allThreads, "--all-threads"), (flagThreshold != nil, "--flag-threshold"), (folded != nil, "--folded")] where set {
                throw ValidationError("\(name) needs --sample.")
            }
        }
        try OutputChecks.file(folded, option: "--folded")
    }

    /// The sampling configuration, nil without `--sample`.
    var configuration: SamplingConfiguration? {
        guard let sample else { return nil }
        return SamplingConfiguration(
            rateHz: sample, allThreads: allThreads,
            flagThresholdNs: flagThreshold.map { UInt64($0 * 1_000_000) } ?? SamplingConfiguration.defaultFlagThresholdNs)
    }
}
