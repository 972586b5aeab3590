import LaunchprofELF

#if canImport(Glibc)
import Glibc
#endif

/// Turns a program's ELF closure into the tracer's `ImagePlan`: which addresses mark which
/// launch boundaries. Runs once per session (and once per image a child execs), never per run.
public enum ImagePlanner {
    /// Where Debian (and most distributions) put detached debug files, by GNU build-id.
    public static let defaultDebugDirectories = ["/usr/lib/debug"]

    public static func plan(
        program: ELFImage, closure: Closure, debugDirectories: [String] = defaultDebugDirectories
    ) -> ImagePlan {
        var unobservable: [(phase: String, reason: String)] = []
        var loader: ImagePlan.Loader?
        var initializers: [String: ImagePlan.Initializers] = [:]
        var libcStartMain: (path: String, address: UInt64)?

        for object in closure.objects.dropFirst() {
            let dynamic = object.dynamic
            initializers[object.path] = ImagePlan.Initializers(
                initFunction: dynamic.initAddress, initArray: dynamic.initArray?.vaddr,
                initArrayCount: dynamic.initArray?.count ?? 0)
            if libcStartMain == nil, let address = object.symbolAddress("__libc_start_main") {
                libcStartMain = (object.path, address)
            }
        }

        if program.kind.usesLoader {
            if let interpreter = closure.objects.first(where: { isLoader($0, of: program) }),
                let rDebug = interpreter.symbolAddress("_r_debug"),
                let debugState = interpreter.symbolAddress("_dl_debug_state")
            {
                let relocate =
                    interpreter.symbolAddress("_dl_relocate_object")
                    ?? debugSymbol("_dl_relocate_object", of: interpreter, in: debugDirectories)
                loader = ImagePlan.Loader(
                    rDebug: rDebug, debugState: debugState, relocateObject: relocate, entry: interpreter.entry)
                if relocate == nil {
                    let reason =
                        "the loader's symbol table is not installed, so the start of relocation "
                        + "cannot be observed (Debian: apt-get install libc6-dbg)"
                    unobservable.append(("loader.map", reason))
                    unobservable.append(("loader.relocate", reason))
                }
            } else {
                let reason = "the loader \(program.interpreter ?? "?") exports no _r_debug/_dl_debug_state"
                for phase in ["loader.map", "loader.relocate", "loader.init"] {
                    unobservable.append((phase, reason))
                }
            }
        } else {
            let reason = "statically linked: no dynamic loader runs"
            for phase in ["loader.map", "loader.relocate", "loader.init"] {
                unobservable.append((phase, reason))
            }
            if let address = program.symbolAddress("__libc_start_main") {
                libcStartMain = (program.path, address)
            }
        }

        // `main` from the program's symbols; a Go program's is `main.main`, which its runtime
        // calls after the package initializers. A stripped program's comes from its entry code,
        // else from libcStartMain at run time (one stop more).
        let cMain = program.symbolAddress("main")
        let goMain = cMain == nil ? program.symbolAddress("main.main") : nil
        let main = cMain ?? goMain ?? program.mainFromEntryCode

        var plan = ImagePlan(
            programPath: program.path,
            isPositionIndependent: program.kind == .pie || program.kind == .staticPIE,
            entry: program.entry, loader: loader,
            programInitializer: firstInitializer(of: program), main: main, libcStartMain: libcStartMain,
            initializers: initializers, unobservable: unobservable)
        plan.readsAffinityBeforeMain = goMain != nil
        (plan.uprobes, plan.uprobeUnobservable) = UprobePlanner.targets(
            program: program, closure: closure, plan: plan,
            loaderImage: closure.objects.first { isLoader($0, of: program) })
        plan.runtime = RuntimeProbePlan.plan(
            program: program, closure: closure, loader: closure.objects.first { isLoader($0, of: program) },
            relocateObject: loader?.relocateObject, debugDirectories: debugDirectories)
        return plan
    }

    /// libc runs a program's DT_PREINIT_ARRAY, then DT_INIT (`_init`), then DT_INIT_ARRAY.
    /// A static program has no dynamic section: its `_init` symbol marks the same point.
    static func firstInitializer(of program: ELFImage) -> ImagePlan.ProgramInitializer? {
        let dynamic = program.dynamic
        if let preinit = dynamic.preinitArray, preinit.count > 0 { return .arraySlot(preinit.vaddr) }
        if let function = dynamic.initAddress ?? program.symbolAddress("_init") { return .function(function) }
        if let array = dynamic.initArray, array.count > 0 { return .arraySlot(array.vaddr) }
        return nil
    }

    private static func isLoader(_ object: ELFImage, of program: ELFImage) -> Bool {
        guard let interpreter = program.interpreter else { return false }
        if object.openedPath == interpreter || object.path == interpreter { return true }
        guard let resolved = realpath(interpreter, nil) else { return false }
        defer { free(resolved) }
        return String(cString: resolved) == object.path
    }

    /// Looks `name` up in the object's detached debug file (`.build-id/xx/yyyy.debug`).
    static func debugSymbol(_ name: String, of object: ELFImage, in debugDirectories: [String]) -> UInt64? {
        debugSymbols([name], of: object, in: debugDirectories)[name]
    }

    /// Looks `names` up in the object's detached debug file, read once: those found.
    static func debugSymbols(_ names: [String], of object: ELFImage, in debugDirectories: [String]) -> [String: UInt64] {
        guard let buildID = object.buildID, buildID.count > 2 else { return [:] }
        let prefix = buildID.prefix(2)
        let rest = buildID.dropFirst(2)
        for directory in debugDirectories {
            let path = "\(directory)/.build-id/\(prefix)/\(rest).debug"
            guard access(path, R_OK) == 0, let debug = try? ELFImage.read(path: path) else { continue }
            var found: [String: UInt64] = [:]
            for name in names { found[name] = debug.symbolAddress(name) }
            if !found.isEmpty { return found }
        }
        return [:]
    }
}
