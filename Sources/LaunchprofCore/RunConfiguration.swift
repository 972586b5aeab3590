import LaunchprofReport

/// Everything `launchprof run` was asked to do, validated by the CLI.
public struct RunConfiguration: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable, Equatable {
        case null
        case file(String)
    }

    /// Where the child's standard output and error go (its output still passes through the
    /// readiness matcher first when `--ready stdout:`/`stderr:` is used).
    public enum Output: Sendable, Equatable {
        case null
        case inherit
        case file(String)
    }

    public var program: String
    public var arguments: [String]
    public var runs = 10
    public var warmup = 0
    public var cold = false
    public var readiness: ReadinessPolicy = .automatic
    /// A run that is not complete after this long is ended and reported as a timeout.
    public var timeoutNs: UInt64? = 10_000_000_000
    /// How long the program may keep running once its launch is complete before launchprof ends
    /// it (0: at once). Lets a program finish the step it is in (a server writing its log line).
    public var lingerNs: UInt64 = 0
    /// After readiness (or the timeout) the child gets SIGTERM, then SIGKILL after this grace.
    public var terminationGraceNs: UInt64 = 1_000_000_000
    /// Extra `KEY=VALUE` pairs for the child's environment.
    public var environment: [String: String] = [:]
    /// launchprof's own environment, the base of the child's (minus what launchprof runs under).
    public var inheritedEnvironment: [String: String] = [:]
    public var workingDirectory: String?
    public var input: Input = .null
    public var output: Output = .null
    /// Pin the tracer and the child to one CPU until `main`.
    public var pinCPU = true
    /// `--resume-cycles K`: once active, send the app to the background and back K times.
    public var resumeCycles = 0
    /// Which observer times the boundaries before `main`.
    public var observer: ObserverChoice = .auto
    /// Observe the phases after `main` (run-time loads, toolkit phases, Python's imports) with the
    /// runtime probes, held system-wide while the session runs (`RuntimeProbePlan`).
    public var runtimeProbes = true
    /// Where sysfs is mounted (the uprobe PMU is looked up there; tests point it elsewhere).
    public var sysfsRoot = "/sys"
    /// `--sample`: sample each launch's main thread (or every thread) from spawn to readiness.
    public var sampling: SamplingConfiguration?
    /// Thread states from the scheduler's events for every run (`--no-thread-states`: off).
    public var threadStates = true

    public init(program: String, arguments: [String]) {
        self.program = program
        self.arguments = arguments
    }

    /// Variables launchprof itself may run under that must not reach the measured program
    /// unless the user passes them with `--env` (a benchmark harness's malloc interposer, say).
    public static let strippedVariables: Set<String> = ["LD_PRELOAD", "LD_AUDIT", "LAUNCHPROF_HOOK_FD"]

    /// The child's environment: the user's, minus what launchprof runs under, plus `--env`.
    public var childEnvironment: [String: String] {
        var result = inheritedEnvironment.filter { !Self.strippedVariables.contains($0.key) }
        for (key, value) in environment { result[key] = value }
        return result
    }
}
