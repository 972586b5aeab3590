/// One phase of one launch: a span (or an instant, `durationNs == 0`) on the run's timeline.
///
/// Times are nanoseconds from the run's `spawned` event. Phase names are a public contract:
/// `exec`, `loader.map`, `loader.relocate`, `loader.init`, `program.init`, `main`, app phases
/// (any name the app passes to `launchprof_begin`), `windowMapped`, `firstFrame`, `extendedLaunch`, `exit`.
public struct LaunchPhase: Sendable, Equatable, Hashable, Codable {
    public var name: String
    public var startNs: UInt64
    public var durationNs: UInt64
    /// The shared object whose initializers this `loader.init` entry times.
    public var object: String?
    /// The extended-launch task id of an `extendedLaunch` entry.
    public var task: String?
    /// The image of an exec chain this phase belongs to; nil for image 0 (the program launched).
    public var image: Int?
    /// launchprof's own cost inside this phase (already in `durationNs`): the ptrace stops that
    /// fell in it, or its uprobe hits times the measured cost of one. Nil when not known.
    public var observerNs: UInt64?
    /// The main thread's time in this phase by scheduler state (adds up to `durationNs`); nil
    /// for an instant, or where the scheduler's events could not be read.
    public var threadState: ThreadStateBreakdown?

    public init(
        name: String, startNs: UInt64, durationNs: UInt64, object: String? = nil,
        task: String? = nil, image: Int? = nil
    ) {
        self.name = name
        self.startNs = startNs
        self.durationNs = durationNs
        self.object = object
        self.task = task
        self.image = image
    }

    /// Where the phase ends, in ns from the spawn.
    public var endNs: UInt64 { startNs + durationNs }

    /// A point on the timeline by definition, not a span that happened to take 0 ns: `main`,
    /// `windowMapped`, `firstFrame`, `exit`, and the `exec` of a later image of an exec chain
    /// (its `execve` is not observed, so only where the image starts is known).
    public static func isInstant(name: String, image: Int?) -> Bool {
        switch name {
        case main, windowMapped, firstFrame, exit: true
        case exec: image != nil
        default: false
        }
    }

    public var isInstant: Bool { Self.isInstant(name: name, image: image) }

    /// Well-known phase names.
    public static let exec = "exec"
    public static let loaderMap = "loader.map"
    public static let loaderRelocate = "loader.relocate"
    public static let loaderInit = "loader.init"
    public static let programStart = "program.start"
    public static let programInit = "program.init"
    public static let main = "main"
    public static let windowMapped = "windowMapped"
    public static let firstFrame = "firstFrame"
    public static let extendedLaunch = "extendedLaunch"
    public static let exit = "exit"
}
