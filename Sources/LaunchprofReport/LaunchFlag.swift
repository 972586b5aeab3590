/// Heavy work the sampler found on the main thread during a launch, with what to do about it.
public struct LaunchFlag: Sendable, Equatable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A function with at least the threshold of inclusive on-CPU time inside one phase.
        case cpu
        /// The main thread blocked (I/O, network, sleep, a lock) for at least the threshold.
        case blocked
        /// A stretch of 250 ms or more with the main thread continuously busy or blocked
        /// (MetricKit's hang).
        case hang
    }

    public var kind: Kind
    /// The launch phase the work falls in (`didFinishLaunching`, `program.init`, …).
    public var phase: String
    /// The function responsible, demangled; `object+0xoffset` when it has no symbol.
    public var function: String
    /// The shared object or executable holding `function` (file name).
    public var object: String
    public var durationNs: UInt64
    /// For `blocked` (and a blocked `hang`): the system call the thread waited in.
    public var syscall: String?
    /// Where the work starts, in ns from the spawn.
    public var startNs: UInt64?
    /// What to do about it ("defer it until after the first frame", "move it off the main thread").
    public var advice: String

    public init(
        kind: Kind, phase: String, function: String, object: String, durationNs: UInt64,
        syscall: String? = nil, startNs: UInt64? = nil, advice: String
    ) {
        self.kind = kind
        self.phase = phase
        self.function = function
        self.object = object
        self.durationNs = durationNs
        self.syscall = syscall
        self.startNs = startNs
        self.advice = advice
    }

    /// MetricKit's hang threshold.
    public static let hangThresholdNs: UInt64 = 250_000_000
}
