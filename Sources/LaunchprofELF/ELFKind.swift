/// What kind of program or library an ELF file is, as the loader sees it.
public enum ELFKind: String, Sendable, Equatable, CaseIterable {
    /// ET_EXEC with an interpreter: a fixed-address dynamically linked program.
    case executable
    /// ET_DYN with an interpreter (or DF_1_PIE): a position-independent program.
    case pie
    /// ET_EXEC without an interpreter: no loader runs.
    case staticExecutable = "static"
    /// ET_DYN marked DF_1_PIE without an interpreter: relocates itself, no loader runs.
    case staticPIE = "static-pie"
    /// ET_DYN without the PIE flag: a shared library (or the loader itself).
    case sharedObject = "shared-object"

    /// Whether starting it involves the dynamic loader.
    public var usesLoader: Bool { self == .executable || self == .pie }
}
