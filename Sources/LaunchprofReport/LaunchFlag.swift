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
    /// The function responsible, demangled; `object+0xoffset` when it has no symbol. For `cpu`
    /// and `hang`: the outermost function inside the phase holding the time (the callee of the
    /// phase's own frame: what the app's author wrote and can move). For `blocked`: the function
    /// that made the system call.
    public var function: String
    /// The shared object or executable holding `function` (file name).
    public var object: String
    public var durationNs: UInt64
    /// For `blocked` (and a blocked `hang`): the system call the thread waited in.
    public var syscall: String?
    /// Where the work starts, in ns from the spawn.
    public var startNs: UInt64?
    /// The frames from the callee of the phase's own frame down to the innermost hot function
    /// (`cpu`, `hang`) or to the function waiting (`blocked`), outermost first; nil when the
    /// flag is a single frame.
    public var path: [String]?
    /// What to do about it ("defer it until after the first frame", "move it off the main thread").
    public var advice: String

    public init(
        kind: Kind, phase: String, function: String, object: String, durationNs: UInt64,
        syscall: String? = nil, startNs: UInt64? = nil, path: [String]? = nil, advice: String
    ) {
        self.path = path
        self.kind = kind
        self.phase = phase
        self.function = function
        self.object = object
        self.durationNs = durationNs
        self.syscall = syscall
        self.startNs = startNs
        self.advice = advice
    }

    /// `parse_catalog → crunch → now`: the path, else the function.
    public var chain: String { Self.chain(function: function, path: path) }

    static func chain(function: String, path: [String]?) -> String {
        guard let path, path.count > 1 else { return function }
        return path.joined(separator: " → ")
    }

    /// MetricKit's hang threshold.
    public static let hangThresholdNs: UInt64 = 250_000_000
}
