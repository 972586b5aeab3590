/// One phase of one launch: a span (or an instant, `durationNs == 0`) on the run's timeline.
///
/// Times are nanoseconds from the run's `spawned` event. Phase names are a public contract:
/// `exec`, `loader.map`, `loader.relocate`, `loader.init`, `program.init`, `main`, app phases
/// (any name the app passes to `launchprof_begin`, or a toolkit's: `willFinishLaunching`,
/// `didFinishLaunching`, `gtk_init`), run-time loads (`dlopen`, `dlopen.map`, `dlopen.relocate`,
/// `dlopen.init`), `python.startup`, `import`, `windowMapped`, `firstFrame`, `extendedLaunch`, `exit`.
public struct LaunchPhase: Sendable, Equatable, Hashable, Codable {
    public var name: String
    public var startNs: UInt64
    public var durationNs: UInt64
    /// The shared object whose initializers this `loader.init` or `dlopen.init` entry times, the
    /// file a `dlopen` asked for (and its `dlopen.map`, `dlopen.relocate`), the module an
    /// `import` loaded.
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
    /// Who reported an app phase: `hook` (the app's own call), or the toolkit or interpreter
    /// launchprof observed it in (`gtk3`, `gtk4`, `gio`, `qt5`, `qt6`, `sdl2`, `tk`, `python`); a
    /// run-time load's steps say `loader`. Nil for the phases before `main`.
    public var source: String?
    /// The thread (its id) a run-time phase ran on, when not the process's main thread.
    public var thread: Int32?
    /// The library whose code called this `dlopen`, where known.
    public var caller: String?

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
    public static let dlopen = "dlopen"
    public static let dlopenMap = "dlopen.map"
    public static let dlopenRelocate = "dlopen.relocate"
    public static let dlopenInit = "dlopen.init"
    public static let willFinishLaunching = "willFinishLaunching"
    public static let didFinishLaunching = "didFinishLaunching"
    public static let gtkInit = "gtk_init"
    public static let pythonStartup = "python.startup"
    public static let pythonImport = "import"
}
