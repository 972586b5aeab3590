/// `launchprof run --sample`: how to sample each launch.
public struct SamplingConfiguration: Sendable, Equatable {
    /// The default rate: 1 kHz, a sample per millisecond of CPU time.
    public static let defaultRateHz = 1_000
    /// The default flag threshold: 20 ms, more than a frame at 60 Hz.
    public static let defaultFlagThresholdNs: UInt64 = 20_000_000

    public var rateHz = SamplingConfiguration.defaultRateHz
    /// Sample every thread, not only the main one.
    public var allThreads = false
    public var flagThresholdNs = SamplingConfiguration.defaultFlagThresholdNs
    /// Bytes of stack copied per sample: 8 KiB holds ~30-60 ordinary frames above the sampled
    /// one (the copy starts at the stack pointer); more costs every sample.
    public var stackBytes: UInt32 = 8_192

    /// Tests: unwind every run's stacks a second time with libunwind alone and keep how many
    /// stacks came out the same (`SessionSampling.comparison`).
    var compareWithLibunwind = false

    public init(rateHz: Int = SamplingConfiguration.defaultRateHz, allThreads: Bool = false,
                flagThresholdNs: UInt64 = SamplingConfiguration.defaultFlagThresholdNs) {
        self.rateHz = rateHz
        self.allThreads = allThreads
        self.flagThresholdNs = flagThresholdNs
    }
}
