/// A launch boundary before `main`, and `main` itself: the one vocabulary both observers use.
///
/// The ptrace observer arms a breakpoint for each (`BreakpointTable.Action.boundary`), the uprobe
/// observer a probe (`UprobeTarget.action`); `BoundaryRecorder` turns the hits into launch events
/// with one set of rules. Adding a boundary is a case here, a rule there and the planners' entries.
public enum Boundary: Sendable, Hashable {
    /// The loader's `_dl_relocate_object`: relocation starts.
    case relocationStart
    /// An object's first initializer; `path` is the object's name as the loader opens it.
    case objectInit(path: String)
    /// The program's entry point (AT_ENTRY).
    case entry
    /// libc's start-up (`__libc_start_main`), observed only where `main` is no symbol, to read
    /// `main` from its argument: it records no event of its own, but ends relocation like any
    /// call past the loader.
    case libcStartMain
    /// The program's first initializer.
    case programInit
    case main
}
