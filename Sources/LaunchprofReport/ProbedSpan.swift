/// A span the runtime probes saw in the launched process, on the kernel's clock: a `dlopen` call
/// and its loader steps, a toolkit's launch phase, a Python import. `PhaseTimeline` makes each
/// a phase of its name; one the process ended inside (`endNs` nil) is left out with its reason.
public struct ProbedSpan: Sendable, Equatable, Codable {
    /// The phase it becomes: `dlopen`, `dlopen.map`, `dlopen.relocate`, `dlopen.init`,
    /// `willFinishLaunching`, `didFinishLaunching`, `gtk_init`, `python.startup`, `import`
    /// (`LaunchPhase`'s names).
    public var name: String
    /// Absolute CLOCK_MONOTONIC ns.
    public var startNs: UInt64
    /// nil: the process ended before the span did.
    public var endNs: UInt64?
    /// The file a dlopen asked for, the object a `dlopen.init` initialises, the module an
    /// `import` loads.
    public var object: String?
    /// The library whose code called `dlopen`, where known.
    public var caller: String?
    /// What observed it: `loader`, a toolkit (`gtk3`, `gtk4`, `gio`, `qt5`, `qt6`, `sdl2`, `tk`)
    /// or `python`.
    public var source: String
    /// The thread it ran on, when not the process's main thread.
    public var thread: Int32?

    public init(
        name: String, startNs: UInt64, endNs: UInt64?, object: String? = nil, caller: String? = nil,
        source: String, thread: Int32? = nil
    ) {
        self.name = name
        self.startNs = startNs
        self.endNs = endNs
        self.object = object
        self.caller = caller
        self.source = source
        self.thread = thread
    }
}
