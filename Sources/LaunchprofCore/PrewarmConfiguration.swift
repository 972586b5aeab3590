import LaunchprofTracing

/// Everything `launchprof prewarm` was asked to do beyond what `launchprof run` does.
public struct PrewarmConfiguration: Sendable {
    public enum FreezePoint: String, Sendable, Equatable, CaseIterable {
        /// The entry of `main`: loader, library and program initializers done, no app work.
        case main
        /// Before the app's first hooked phase (the hooks raise SIGSTOP there).
        case willFinishLaunching
    }

    /// The ordinary `run` options: runs, readiness, timeout, environment, output.
    public var run: RunConfiguration
    public var freezeAt: FreezePoint = .main
    public var hold: PrewarmHold = .fixed(ns: 1_000_000_000)
    /// Seed for random holds, so a session can be repeated.
    public var seed: UInt64 = 1
    /// `--pool N`: frozen processes kept ready (0: one prewarm per run, paired with an ordinary one).
    public var pool = 0
    /// `--ttl`: a pooled process not launched in this long is ended.
    public var ttlNs: UInt64?
    /// Scan the prewarm part for hazards in one untimed launch first.
    public var scanHazards = true

    public init(run: RunConfiguration) {
        self.run = run
    }

    /// The environment variable the hooks read to freeze before `willFinishLaunching`.
    public static let freezeVariable = "LAUNCHPROF_FREEZE_AT"
}
