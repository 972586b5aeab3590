import LaunchprofELF
import LaunchprofReport

/// The runtime probes of one program: where its loads after `main` (every `dlopen`), its
/// toolkit's launch phases and its interpreter's imports are observed, read from the ELF files
/// of its closure alone. A value: the run observer arms it for a session, and the field monitor
/// (issue 36) can arm the same plan for launches it did not start.
///
/// Where each probe goes and why it marks what it claims is in docs/observers.md ("After
/// `main`"); in short:
/// - the loader (libc6-dbg's symbols): libc's `dlopen`/`dlmopen`/`__libc_dlopen_mode` entry
///   and return bound each call, even one that fails (the loader's `_dl_open` never returns
///   then: it unwinds); `_dl_relocate_object` (the probe the pre-main plan uses), `_dl_init` and
///   `call_init` split it;
/// - GApplication: `g_application_register` (its `startup` emission), `g_application_activate`
///   and `g_application_open`; GTK: `gtk_init_check`, GTK 3's `gtk_main`;
/// - Qt 5 and 6: the application classes' public constructors and `QCoreApplication::exec`;
/// - SDL 2: `SDL_Init` and `SDL_CreateWindow`; Tk: `Tk_Init`, `Tk_MainLoop`;
/// - Python: `Py_BytesMain`, the functions that run a script or command, and its SDT import
///   probes (with their semaphores).
public struct RuntimeProbePlan: Sendable {
    public var probes: [RuntimeProbe]
    /// The toolkits and interpreters found, as phases name their source (`gtk3`, `qt5`, `python`).
    public var sources: [String]
    /// Phases these probes cannot give this program, and why.
    public var unobservable: [(phase: String, reason: String)]

    /// The program's path: the object the loader names "" (the main program's link map).
    public var program: String?

    public init(
        probes: [RuntimeProbe] = [], sources: [String] = [], unobservable: [(phase: String, reason: String)] = [],
        program: String? = nil
    ) {
        self.program = program
        self.probes = probes
        self.sources = sources
        self.unobservable = unobservable
    }

    /// The probes of `program`'s closure. `loader`: the program's dynamic loader in the closure;
    /// `relocateObject`: its `_dl_relocate_object` when the caller has looked it up already.
    public static func plan(
        program: ELFImage, closure: Closure, loader: ELFImage?, relocateObject: UInt64? = nil,
        debugDirectories: [String] = ImagePlanner.defaultDebugDirectories
    ) -> RuntimeProbePlan {
        var planner = Builder()
        planner.plan.program = program.path
        // A static program has no loader to probe (its rare static dlopen is not observed).
        guard program.kind.usesLoader else { return planner.plan }
        if let loader { planner.addLoader(loader, relocateObject: relocateObject, debugDirectories: debugDirectories) }
        var gui: String?
        for object in closure.objects {
            switch Self.library(object) {
            case "libgtk-3.so": gui = "gtk3"
            case "libgtk-4.so": gui = "gtk4"
            default: break
            }
        }
        for object in closure.objects {
            let name = Self.library(object)
            switch name {
            case "libc.so": planner.addDlopen(object)
            case "libgio-2.0.so": planner.addGApplication(object, source: gui ?? "gio")
            case "libgtk-3.so": planner.addGTK(object, source: "gtk3", hasMain: true)
            case "libgtk-4.so": planner.addGTK(object, source: "gtk4", hasMain: false)
            case "libQt5Core.so", "libQt6Core.so":
                planner.addQt(object, source: name.contains("Qt5") ? "qt5" : "qt6", core: true)
            case "libQt5Gui.so", "libQt6Gui.so", "libQt5Widgets.so", "libQt6Widgets.so":
                planner.addQt(object, source: name.contains("Qt5") ? "qt5" : "qt6", core: false)
            case "libSDL2-2.0.so": planner.addSDL(object)
            default:
                if name.hasPrefix("libtk8.") { planner.addTk(object) }
                // The interpreter itself (python3.11 links libpython statically) or its library.
                let file = object.path.split(separator: "/").last ?? ""
                if name.hasPrefix("libpython3.") || object.path == program.path && file.hasPrefix("python3") {
                    planner.addPython(object)
                }
            }
        }
        planner.plan.notePhases()
        return planner.plan
    }

    /// The phases these probes can give this program: `dlopen` for any dynamically linked one,
    /// the app phases where a toolkit was found, Python's start and imports. Kept with the plan,
    /// so a launch that reports them unobserved (the ptrace observer) allocates nothing for it.
    public private(set) var phases: [String] = []

    mutating func notePhases() {
        phases = []
        guard !probes.isEmpty else { return }
        phases = [LaunchPhase.dlopen]
        if sources.contains(where: { $0 != "python" }) {
            phases += [LaunchPhase.willFinishLaunching, LaunchPhase.didFinishLaunching]
        }
        if sources.contains("python") { phases += [LaunchPhase.pythonStartup, LaunchPhase.pythonImport] }
    }

    /// Why the ptrace observer shows none of them.
    public static let ptraceReason =
        "the ptrace observer does not trace after main (a breakpoint would stop the app at every load and toolkit call): "
        + "--observer uprobe shows it"

    /// The phases refused probes would have given, with why, once each.
    public static func unobservable(_ refused: [RuntimeProbe], holderRuns: Bool) -> [(phase: String, reason: String)] {
        var result: [(phase: String, reason: String)] = []
        for probe in refused {
            let phase: String
            switch probe.role {
            case .dlopenCall, .dlopenReturn: phase = LaunchPhase.dlopen
            case .loaderRelocate: phase = LaunchPhase.dlopenRelocate
            case .loaderInit, .loaderObjectInit: phase = LaunchPhase.dlopenInit
            case .pythonMain, .pythonRun: phase = LaunchPhase.pythonStartup
            case .pythonImportStart, .pythonImportDone: phase = LaunchPhase.pythonImport
            case .applicationRegister, .applicationRegisterReturn, .gtkInit, .gtkInitReturn, .qtConstructor,
                .qtConstructorReturn, .sdlInit, .sdlInitReturn, .tkInit, .tkInitReturn:
                phase = LaunchPhase.willFinishLaunching
            case .applicationActivate, .applicationActivateReturn, .gtkMain, .qtExec, .sdlCreateWindowReturn, .tkMainLoop:
                phase = LaunchPhase.didFinishLaunching
            }
            guard !result.contains(where: { $0.phase == phase }) else { continue }
            let reason =
                holderRuns
                ? "the kernel refused the \(probe.source) probe at \(probe.path)+0x\(String(probe.offset, radix: 16))"
                : "needs the uprobe holder (tracefs uprobe events): the uprobe PMU's own probes fetch no names"
            result.append((phase, reason))
        }
        return result
    }

    /// An object's file name up to `.so` (`libQt5Core.so.5.15.8` → `libQt5Core.so`).
    static func library(_ object: ELFImage) -> String {
        let file = object.path.split(separator: "/").last.map(String.init) ?? object.path
        guard let so = file.firstRange(of: ".so") else { return file }
        return String(file[..<so.upperBound])
    }

    private struct Builder {
        var plan = RuntimeProbePlan()

        mutating func note(_ source: String) {
            if !plan.sources.contains(source) { plan.sources.append(source) }
        }

        /// A probe on a function's first instruction: where a return probe must be (the kernel
        /// swaps the return address there), and where an entry probe reads argument registers
        /// before the function moves them. A function's entry and return probes share one trap.
        @discardableResult
        mutating func atEntry(
            _ object: ELFImage, address: UInt64, _ role: RuntimeProbe.Role, source: String,
            isReturn: Bool = false, fetch: [FetchedArgument] = []
        ) -> Bool {
            guard let offset = object.fileOffset(ofAddress: address) else { return false }
            let emulated = ProbePlacement.isEmulated(object.bytes(atAddress: address, count: 16), 0)
            plan.probes.append(RuntimeProbe(
                path: object.path, offset: offset, isReturn: isReturn, fetch: fetch, role: role, source: source,
                emulated: emulated))
            return true
        }

        /// Entry and return probes of the exported function `symbol`.
        @discardableResult
        mutating func call(
            _ object: ELFImage, _ symbol: String, _ entry: RuntimeProbe.Role?, _ exit: RuntimeProbe.Role?,
            source: String, fetch: [FetchedArgument] = [], fetchOnReturn: [FetchedArgument] = []
        ) -> Bool {
            guard let address = object.symbolAddress(symbol) else { return false }
            if let entry { atEntry(object, address: address, entry, source: source, fetch: fetch) }
            if let exit { atEntry(object, address: address, exit, source: source, isReturn: true, fetch: fetchOnReturn) }
            return true
        }

        /// The loader's steps inside a load. Its internal functions come from libc6-dbg's
        /// detached symbols, as the pre-main plan's do.
        mutating func addLoader(_ loader: ELFImage, relocateObject: UInt64?, debugDirectories: [String]) {
            var names = ["_dl_init", "call_init"]
            if relocateObject == nil { names.append("_dl_relocate_object") }
            let symbols = ImagePlanner.debugSymbols(names, of: loader, in: debugDirectories)
            guard let relocate = relocateObject ?? symbols["_dl_relocate_object"], let initAll = symbols["_dl_init"],
                let callInit = symbols["call_init"]
            else {
                let reason =
                    "the loader's symbol table is not installed, so a dlopen's steps cannot be observed "
                    + "(Debian: apt-get install libc6-dbg)"
                for phase in ["dlopen.map", "dlopen.relocate", "dlopen.init"] { plan.unobservable.append((phase, reason)) }
                return
            }
            // The same probe the pre-main plan puts on relocation's start (one event for both).
            offEntry(loader, address: relocate, .loaderRelocate)
            offEntry(loader, address: initAll, .loaderInit)
            // call_init(l, …) begins with a guard (`cmp %rdi, 0x28(%rdi); je body; ret` in
            // Debian 12's glibc 2.36): the probe goes on the guard's jump, where %rdi is still the
            // object, whose l_name is the word at +8.
            let code = loader.bytes(atAddress: callInit, count: 16)
            let delta = ProbePlacement.guardJump(code) ?? 0
            // Its l_addr (the word at +0) is where the object lies: a dlopen's caller is found
            // among the objects initialised before the call (`RuntimeRecorder`).
            let fetch = [FetchedArgument(.di, dereferences: [8, 0], kind: .string), FetchedArgument(.di, dereferences: [0], kind: .u64)]
            if let offset = loader.fileOffset(ofAddress: callInit + delta) {
                plan.probes.append(RuntimeProbe(
                    path: loader.path, offset: offset, fetch: fetch,
                    role: .loaderObjectInit, source: "loader", emulated: ProbePlacement.isEmulated(code, Int(delta))))
            }
        }

        /// A probe placed as the pre-main plan places its own (off the entry, on an emulated
        /// instruction), for a function whose arguments it does not read.
        mutating func offEntry(_ object: ELFImage, address: UInt64, _ role: RuntimeProbe.Role, source: String = "loader") {
            var address = address
            var code = object.bytes(atAddress: address, count: 64)
            if let target = ProbePlacement.jumpTarget(code, at: address) {
                address = target
                code = object.bytes(atAddress: address, count: 64)
            }
            guard let offset = object.fileOffset(ofAddress: address) else { return }
            let (delta, emulated) = ProbePlacement.place(code)
            plan.probes.append(RuntimeProbe(
                path: object.path, offset: offset + delta, role: role, source: source, emulated: emulated))
        }

        /// libc's load calls: the file name (%rdi) and the caller (the return address at %rsp)
        /// at entry, the handle (%rax) at return.
        mutating func addDlopen(_ libc: ELFImage) {
            let entry = [FetchedArgument(.di, dereferences: [0], kind: .string), FetchedArgument(.sp, dereferences: [0], kind: .u64)]
            let exit = [FetchedArgument(.ax, kind: .u64)]
            for symbol in ["dlopen", "dlmopen", "__libc_dlopen_mode"] {
                // dlmopen's file is its second argument.
                var fetch = entry
                if symbol == "dlmopen" { fetch[0] = FetchedArgument(.si, dereferences: [0], kind: .string) }
                call(libc, symbol, .dlopenCall, .dlopenReturn, source: "loader", fetch: fetch, fetchOnReturn: exit)
            }
        }

        mutating func addGApplication(_ gio: ELFImage, source: String) {
            guard call(gio, "g_application_register", .applicationRegister, .applicationRegisterReturn, source: source)
            else { return }
            call(gio, "g_application_activate", .applicationActivate, .applicationActivateReturn, source: source)
            call(gio, "g_application_open", .applicationActivate, .applicationActivateReturn, source: source)
            note(source)
        }

        mutating func addGTK(_ gtk: ELFImage, source: String, hasMain: Bool) {
            guard call(gtk, "gtk_init_check", .gtkInit, .gtkInitReturn, source: source) else { return }
            if hasMain { call(gtk, "gtk_main", .gtkMain, nil, source: source) }
            note(source)
        }

        mutating func addQt(_ library: ELFImage, source: String, core: Bool) {
            let constructors = [
                "_ZN16QCoreApplicationC1ERiPPci", "_ZN15QGuiApplicationC1ERiPPci", "_ZN12QApplicationC1ERiPPci",
            ]
            for symbol in constructors where call(library, symbol, .qtConstructor, .qtConstructorReturn, source: source) {
                note(source)
            }
            if core { call(library, "_ZN16QCoreApplication4execEv", .qtExec, nil, source: source) }
        }

        mutating func addSDL(_ sdl: ELFImage) {
            guard call(sdl, "SDL_Init", .sdlInit, .sdlInitReturn, source: "sdl2") else { return }
            call(sdl, "SDL_CreateWindow", nil, .sdlCreateWindowReturn, source: "sdl2")
            note("sdl2")
        }

        mutating func addTk(_ tk: ELFImage) {
            guard call(tk, "Tk_Init", .tkInit, .tkInitReturn, source: "tk") else { return }
            call(tk, "Tk_MainLoop", .tkMainLoop, nil, source: "tk")
            note("tk")
        }

        /// Python's start and its SDT import probes, whose sites run only while their semaphore
        /// is non-zero: the probe carries it as its reference counter.
        mutating func addPython(_ python: ELFImage) {
            let sdt = python.sdtProbes.filter { $0.provider == "python" }
            guard let start = sdt.first(where: { $0.name == "import__find__load__start" }),
                let done = sdt.first(where: { $0.name == "import__find__load__done" }),
                let startName = start.arguments.first.flatMap({ FetchedArgument(sdtLocation: $0, kind: .string) }),
                let doneName = done.arguments.first.flatMap({ FetchedArgument(sdtLocation: $0, kind: .string) })
            else { return }
            call(python, "Py_BytesMain", .pythonMain, nil, source: "python")
            for symbol in ["_PyRun_SimpleFileObject", "PyRun_SimpleStringFlags", "_PyRun_AnyFileObject"] {
                call(python, symbol, .pythonRun, nil, source: "python")
            }
            for (probe, role, name) in [(start, RuntimeProbe.Role.pythonImportStart, startName), (done, .pythonImportDone, doneName)] {
                plan.probes.append(RuntimeProbe(
                    path: python.path, offset: probe.fileOffset, referenceCounter: probe.semaphoreFileOffset,
                    fetch: [name], role: role, source: "python",
                    emulated: ProbePlacement.isEmulated(python.bytes(atAddress: probe.address, count: 4), 0)))
            }
            note("python")
        }
    }
}
