/// What the tracer needs to know about one program image to observe its launch boundaries,
/// computed once per session from the ELF files (see `ImagePlanner`), never per run.
/// Addresses are unrelocated ELF virtual addresses; the tracer adds load biases it reads from the
/// tracee.
public struct ImagePlan: Sendable {
    /// The dynamic loader's symbols (absent for a statically linked program).
    public struct Loader: Sendable {
        /// `_r_debug`, the loader's rendezvous structure.
        public var rDebug: UInt64
        /// `_dl_debug_state`, the function the loader calls when its object list changes.
        public var debugState: UInt64
        /// `_dl_relocate_object`, known only from the loader's symbol table (Debian: libc6-dbg).
        public var relocateObject: UInt64?
        /// The loader's e_entry: where a fresh image starts, so the exec stop's program counter
        /// gives the loader's load address without reading the auxiliary vector.
        public var entry: UInt64

        public init(rDebug: UInt64, debugState: UInt64, relocateObject: UInt64?, entry: UInt64) {
            self.rDebug = rDebug
            self.debugState = debugState
            self.relocateObject = relocateObject
            self.entry = entry
        }
    }

    /// Where an object's initializers start: DT_INIT runs first, then DT_INIT_ARRAY entries.
    public struct Initializers: Sendable, Equatable {
        public var initFunction: UInt64?
        /// DT_INIT_ARRAY's address; its first entry is read from memory after relocation.
        public var initArray: UInt64?
        public var initArrayCount: Int

        public init(initFunction: UInt64?, initArray: UInt64?, initArrayCount: Int) {
            self.initFunction = initFunction
            self.initArray = initArray
            self.initArrayCount = initArrayCount
        }

        public var isEmpty: Bool { initFunction == nil && initArrayCount == 0 }
    }

    public var programPath: String
    /// The program is position-independent: its load bias is AT_ENTRY − e_entry.
    public var isPositionIndependent: Bool
    public var entry: UInt64
    public var loader: Loader?
    /// Where the program's own initializers start: a function, or an array slot whose relocated
    /// entry is read from memory once the loader is done.
    public enum ProgramInitializer: Sendable, Equatable {
        case function(UInt64)
        case arraySlot(UInt64)
    }

    public var programInitializer: ProgramInitializer?
    /// `main`'s address in the program, when symbols or `_start` reveal it.
    public var main: UInt64?
    /// The program's runtime reads its CPU affinity before `main` (Go sizes GOMAXPROCS from it
    /// before `main.main`): pinning the child until `main` would change what it measures.
    public var readsAffinityBeforeMain = false
    /// Otherwise `main` is read from `__libc_start_main`'s first argument: (object path, address).
    public var libcStartMain: (path: String, address: UInt64)?
    /// Initializers of every shared object in the closure, keyed by real path.
    public var initializers: [String: Initializers]
    /// Boundaries that cannot be observed for this program, with the reason.
    public var unobservable: [(phase: String, reason: String)]
    /// The same boundaries as uprobes (file and offset), for the uprobe observer.
    public var uprobes: [UprobeTarget] = []
    /// Boundaries the uprobe observer cannot see that ptrace can (read at run time), and why.
    public var uprobeUnobservable: [(phase: String, reason: String)] = []
    /// The probes after `main` (loads, toolkit phases, imports), for the uprobe observer.
    public var runtime = RuntimeProbePlan()

    public init(
        programPath: String, isPositionIndependent: Bool, entry: UInt64, loader: Loader?,
        programInitializer: ProgramInitializer? = nil, main: UInt64?, libcStartMain: (path: String, address: UInt64)?,
        initializers: [String: Initializers], unobservable: [(phase: String, reason: String)]
    ) {
        self.programPath = programPath
        self.isPositionIndependent = isPositionIndependent
        self.entry = entry
        self.loader = loader
        self.programInitializer = programInitializer
        self.main = main
        self.libcStartMain = libcStartMain
        self.initializers = initializers
        self.unobservable = unobservable
    }
}
