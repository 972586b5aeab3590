/// The result of `launchprof run`: what was launched, where, how, every measured run and the
/// summary. Encoded with sorted keys (`LaunchReportWriter`), integer ns and bytes throughout.
///
/// Top-level keys sort as host < hosts < mode < runs < schemaVersion < summary < target, which lets the
/// writer stream runs to disk before the summary is known. A key added later must sort after
/// `runs` or be known before the first run.
public struct LaunchReport: Sendable, Equatable, Codable {
    /// Bumped on any incompatible change of names or meaning.
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var target: Target
    public var host: Host
    public var mode: Mode
    public var runs: [LaunchRun]
    public var summary: LaunchSummary
    /// Set by `launchprof merge`: every machine the runs were measured on (`host` is the
    /// first's). Nil for a report of one machine.
    public var hosts: [Host]?

    public init(
        schemaVersion: Int = LaunchReport.currentSchemaVersion, target: Target, host: Host,
        mode: Mode, runs: [LaunchRun], summary: LaunchSummary
    ) {
        self.schemaVersion = schemaVersion
        self.target = target
        self.host = host
        self.mode = mode
        self.runs = runs
        self.summary = summary
    }

    /// A report of `runs`, with the summary computed from them.
    public init(target: Target, host: Host, mode: Mode, runs: [LaunchRun]) {
        var builder = LaunchSummaryBuilder()
        for run in runs { builder.add(run) }
        self.init(target: target, host: host, mode: mode, runs: runs, summary: builder.summary)
    }

    /// The program launched.
    public struct Target: Sendable, Equatable, Codable {
        /// The resolved executable path.
        public var path: String
        /// The arguments after the program (argv[1...]).
        public var arguments: [String]
        /// The executable's GNU build-id in hex; nil when it has none.
        public var buildID: String?

        public init(path: String, arguments: [String], buildID: String? = nil) {
            self.path = path
            self.arguments = arguments
            self.buildID = buildID
        }
    }

    /// The machine the runs were measured on.
    public struct Host: Sendable, Equatable, Codable {
        /// Kernel release (`uname -r`).
        public var kernel: String
        /// CPU model name.
        public var cpu: String
        /// Online logical CPUs.
        public var cores: Int
        /// C library and version, e.g. "glibc 2.36".
        public var libc: String
        /// The machine's host name; nil in reports written before it was recorded.
        public var name: String?

        public init(kernel: String, cpu: String, cores: Int, libc: String, name: String? = nil) {
            self.name = name
            self.kernel = kernel
            self.cpu = cpu
            self.cores = cores
            self.libc = libc
        }
    }

    /// Whether the runs are prewarmed launches (said by the mode, or by a prewarm summary in a
    /// report written before the mode said it).
    public var isPrewarm: Bool { mode.prewarm == true || summary.prewarm != nil }

    /// How the runs were made.
    public struct Mode: Sendable, Equatable, Codable {
        /// Measured runs requested.
        public var runs: Int
        /// Warm-up runs made first and not reported.
        public var warmup: Int
        /// `--cold`: the closure's files were evicted from the page cache before each run.
        public var cold: Bool
        /// The `--ready` rule, spelled as on the command line.
        public var readiness: String
        /// `--timeout` per run, if any.
        public var timeoutNs: UInt64?
        /// The observer that ran: "uprobe" or "ptrace".
        public var observer: String?
        /// Why that observer: asked for, or (`--observer auto`) what decided it.
        public var observerReason: String?
        /// `launchprof prewarm` (or a bench launch of mode prewarm): the runs are prewarmed
        /// launches, timed from the resume, each paired with an ordinary one. Nil otherwise.
        public var prewarm: Bool?

        public init(
            runs: Int, warmup: Int = 0, cold: Bool = false,
            readiness: ReadinessPolicy = .automatic, timeoutNs: UInt64? = nil
        ) {
            self.runs = runs
            self.warmup = warmup
            self.cold = cold
            self.readiness = readiness.argument
            self.timeoutNs = timeoutNs
        }
    }
}
