import LaunchprofReport

/// Turns one process's runtime probe hits (`RuntimeProbePlan`) into spans, with these rules:
/// - **dlopen**: each call of libc's `dlopen`/`dlmopen`/`__libc_dlopen_mode` is a `dlopen` span
///   (entry → return) on its thread, with the file it asked for. Inside it, on the same thread and
///   not inside a nested call: `dlopen.map` from the call to the loader's first
///   `_dl_relocate_object` (else its `_dl_init`, else the return: a failed or a repeated load only
///   searches and maps); `dlopen.relocate` from there to `_dl_init`; one `dlopen.init` per object
///   the call initialises, from the loader's `call_init` for it to the next `call_init` or the
///   return. `call_init` also runs for objects already initialised (each dependency of the loaded
///   one): an object's first `call_init` in the process is its initialisation, later ones return
///   at once and only end the previous object's span. A dlopen made by a constructor (inside
///   another's `dlopen.init`) nests inside it. Its `caller` is the object whose code made the
///   call: the return address at libc's entry, found among the objects initialised before the
///   call (each `call_init` hit carries the object's load address, the loader's `l_addr`) —
///   the one with the highest load address at or below it, if that object's file maps the
///   address (`objectMaps`); no caller otherwise (code outside any object, or an unreadable file).
/// - **toolkits** (first occurrence only; a later call is the app's business, not its launch):
///   GApplication: `willFinishLaunching` = `g_application_register` (the `startup` emission: the
///   class handler, where GTK initialises, then the app's handlers), `didFinishLaunching` =
///   `g_application_activate` or `g_application_open` (the app's handlers, then the class
///   handler). GTK without GApplication: `willFinishLaunching` = `gtk_init`, `didFinishLaunching`
///   = from its return to `gtk_main` (GTK 3). `gtk_init` is also a phase of its own. Qt:
///   `willFinishLaunching` = the outermost application constructor, `didFinishLaunching` = from
///   its return to `QCoreApplication::exec`. SDL 2: `SDL_Init`, then to the first
///   `SDL_CreateWindow`'s return. Tk: `Tk_Init`, then to `Tk_MainLoop`.
/// - **Python**: `python.startup` from `Py_BytesMain` to the start of the script or command;
///   each import (SDT `import__find__load__start` → `__done`) an `import` span with its module,
///   nested imports inside their importer's.
/// A span whose end never came (the process ended inside it) has `endNs` nil.
public struct RuntimeRecorder: Sendable {
    private let probes: [RuntimeProbe.Key: RuntimeProbe]
    private let pid: Int32
    private let program: String?

    public init(plan: RuntimeProbePlan, pid: Int32) {
        program = plan.program
        var probes: [RuntimeProbe.Key: RuntimeProbe] = [:]
        for probe in plan.probes where probes[probe.key] == nil { probes[probe.key] = probe }
        self.probes = probes
        self.pid = pid
    }

    /// The spans the hits mark, by start time. `objectMaps(path, address)`: whether the file at
    /// `path` maps the unrelocated `address` in one of its loadable segments.
    public func spans(_ hits: [RuntimeProbeHit], objectMaps: (String, UInt64) -> Bool = { _, _ in false }) -> [ProbedSpan] {
        var state = State(pid: pid, program: program)
        for hit in hits.sorted(by: { $0.timeNs < $1.timeNs }) {
            guard let probe = probes[hit.key] else { continue }
            state.record(hit, probe, objectMaps: objectMaps)
        }
        state.finish()
        return state.spans.enumerated().sorted { ($0.element.startNs, $0.offset) < ($1.element.startNs, $1.offset) }.map(\.element)
    }

    /// Why a toolkit's `didFinishLaunching` is missing from `spans` although its
    /// `willFinishLaunching` is there: the app never made the call that ends it.
    public static func missingDidFinishLaunching(_ spans: [ProbedSpan]) -> (phase: String, reason: String)? {
        guard let will = spans.first(where: { $0.name == LaunchPhase.willFinishLaunching }),
            !spans.contains(where: { $0.name == LaunchPhase.didFinishLaunching })
        else { return nil }
        let call: String
        switch will.source {
        case "qt5", "qt6": call = "entered no QCoreApplication::exec"
        case "sdl2": call = "created no window with SDL_CreateWindow"
        case "tk": call = "entered no Tk_MainLoop"
        case "gtk4" where !spans.contains(where: { $0.name == LaunchPhase.gtkInit && $0.startNs == will.startNs }),
            "gtk3" where !spans.contains(where: { $0.name == LaunchPhase.gtkInit && $0.startNs == will.startNs }), "gio":
            call = "called neither g_application_activate nor g_application_open (its windows came from another handler, e.g. command-line)"
        case "gtk4": call = "runs its own loop (GTK 4 has no gtk_main)"
        default: call = "entered no gtk_main"
        }
        return (LaunchPhase.didFinishLaunching, "the app \(call), which would have ended it")
    }

    private struct Load {
        var file: String?
        var caller: String?
        var start: UInt64
        var relocateStart: UInt64?
        var initStart: UInt64?
        var initializing: (object: String, start: UInt64)?
    }

    private struct Toolkit {
        var start: UInt64?
        var end: UInt64?
        var source = ""
        var thread: Int32 = 0
        var depth = 0

        /// The first call of a toolkit function starts its span; calls nested inside it (a
        /// QApplication constructor's base classes, a recursive call) deepen it.
        mutating func enter(_ t: UInt64, _ tid: Int32, _ source: String) {
            if start == nil {
                self = Toolkit(start: t, source: source, thread: tid, depth: 1)
            } else if end == nil, thread == tid {
                depth += 1
            }
        }

        mutating func leave(_ t: UInt64, _ tid: Int32) {
            guard start != nil, end == nil, thread == tid else { return }
            depth -= 1
            if depth == 0 { end = t }
        }
    }

    private struct State {
        let pid: Int32
        let program: String?
        var spans: [ProbedSpan] = []
        var loads: [Int32: [Load]] = [:]
        var initialized: Set<String> = []
        /// Each object initialised so far by its load address (`l_addr`), highest first.
        var objects: [(base: UInt64, path: String)] = []
        var register = Toolkit()
        var activate = Toolkit()
        var gtkInit = Toolkit()
        var gtkMain: UInt64?
        var qt = Toolkit()
        var qtExec: UInt64?
        var sdl = Toolkit()
        var sdlWindow: UInt64?
        var tk = Toolkit()
        var tkMainLoop: UInt64?
        var pythonMain: UInt64?
        var pythonRun: UInt64?
        var imports: [Int32: [(module: String, start: UInt64)]] = [:]

        init(pid: Int32, program: String?) {
            self.pid = pid
            self.program = program
        }

        /// The object whose code is at `address`: the one loaded highest at or below it, if
        /// its file maps what lies there (the address may be in no object at all).
        func object(at address: UInt64, objectMaps: (String, UInt64) -> Bool) -> String? {
            guard let candidate = objects.first(where: { $0.base <= address }),
                objectMaps(candidate.path, address - candidate.base)
            else { return nil }
            return candidate.path
        }

        func thread(_ tid: Int32) -> Int32? { tid == pid ? nil : tid }

        mutating func span(_ name: String, _ start: UInt64, _ end: UInt64?, object: String? = nil, source: String, tid: Int32) {
            spans.append(ProbedSpan(name: name, startNs: start, endNs: end, object: object, source: source, thread: thread(tid)))
        }

        mutating func record(_ hit: RuntimeProbeHit, _ probe: RuntimeProbe, objectMaps: (String, UInt64) -> Bool) {
            let t = hit.timeNs
            let tid = hit.thread
            switch probe.role {
            case .dlopenCall:
                let caller = hit.integer(1).flatMap { object(at: $0, objectMaps: objectMaps) }
                loads[tid, default: []].append(Load(file: hit.string(0), caller: caller, start: t))
            case .dlopenReturn:
                guard let load = loads[tid]?.popLast() else { return }
                close(load, at: t, tid: tid)
            case .loaderRelocate:
                guard var load = loads[tid]?.last else { return }
                if load.relocateStart == nil, load.initStart == nil { load.relocateStart = t }
                loads[tid]![loads[tid]!.count - 1] = load
            case .loaderInit:
                guard var load = loads[tid]?.last else { return }
                if load.initStart == nil { load.initStart = t }
                loads[tid]![loads[tid]!.count - 1] = load
            case .loaderObjectInit:
                let object = hit.string(0) ?? ""
                let first = initialized.insert(object).inserted
                // The main program's link map has no name.
                if first, let base = hit.integer(1), let path = object.isEmpty ? program : object {
                    objects.insert((base, path), at: objects.firstIndex { $0.base < base } ?? objects.count)
                }
                guard var load = loads[tid]?.last else { return }
                if let current = load.initializing {
                    span(LaunchPhase.dlopenInit, current.start, t, object: current.object, source: "loader", tid: tid)
                    load.initializing = nil
                }
                if first, !object.isEmpty { load.initializing = (object, t) }
                loads[tid]![loads[tid]!.count - 1] = load

            case .applicationRegister: register.enter(t, tid, probe.source)
            case .applicationRegisterReturn: register.leave(t, tid)
            case .applicationActivate: activate.enter(t, tid, probe.source)
            case .applicationActivateReturn: activate.leave(t, tid)
            case .gtkInit: gtkInit.enter(t, tid, probe.source)
            case .gtkInitReturn: gtkInit.leave(t, tid)
            case .gtkMain: if gtkMain == nil, gtkInit.end != nil { gtkMain = t }
            case .qtConstructor: qt.enter(t, tid, probe.source)
            case .qtConstructorReturn: qt.leave(t, tid)
            case .qtExec: if qtExec == nil, qt.end != nil { qtExec = t }
            case .sdlInit: sdl.enter(t, tid, probe.source)
            case .sdlInitReturn: sdl.leave(t, tid)
            case .sdlCreateWindowReturn: if sdlWindow == nil, sdl.end != nil { sdlWindow = t }
            case .tkInit: tk.enter(t, tid, probe.source)
            case .tkInitReturn: tk.leave(t, tid)
            case .tkMainLoop: if tkMainLoop == nil, tk.end != nil { tkMainLoop = t }

            case .pythonMain: if pythonMain == nil { pythonMain = t }
            case .pythonRun: if pythonRun == nil, pythonMain != nil { pythonRun = t }
            case .pythonImportStart:
                imports[tid, default: []].append((hit.string(0) ?? "?", t))
            case .pythonImportDone:
                let module = hit.string(0)
                // Pop to the import this one ends (an import that raised past its own `done`
                // would otherwise end here).
                while let open = imports[tid]?.popLast() {
                    span(LaunchPhase.pythonImport, open.start, t, object: open.module, source: "python", tid: tid)
                    if open.module == module || module == nil { break }
                }
            }
        }

        mutating func close(_ load: Load, at end: UInt64?, tid: Int32) {
            let object = load.file
            spans.append(ProbedSpan(
                name: LaunchPhase.dlopen, startNs: load.start, endNs: end, object: object, caller: load.caller, source: "loader",
                thread: thread(tid)))
            let mapEnd = load.relocateStart ?? load.initStart ?? end
            span(LaunchPhase.dlopenMap, load.start, mapEnd, object: object, source: "loader", tid: tid)
            if let relocate = load.relocateStart {
                span(LaunchPhase.dlopenRelocate, relocate, load.initStart ?? end, object: object, source: "loader", tid: tid)
            }
            if let current = load.initializing {
                span(LaunchPhase.dlopenInit, current.start, end, object: current.object, source: "loader", tid: tid)
            }
        }

        /// Spans whose end never came, and the toolkit phases.
        mutating func finish() {
            for (tid, open) in loads { for load in open.reversed() { close(load, at: nil, tid: tid) } }
            for (tid, open) in imports {
                for entry in open { span(LaunchPhase.pythonImport, entry.start, nil, object: entry.module, source: "python", tid: tid) }
            }
            let will = LaunchPhase.willFinishLaunching
            let did = LaunchPhase.didFinishLaunching
            // GApplication's phases take precedence over gtk_init's: an app may call both.
            if let start = register.start {
                span(will, start, register.end, source: register.source, tid: register.thread)
                if let activated = activate.start {
                    span(did, activated, activate.end, source: activate.source, tid: activate.thread)
                }
            } else if let start = gtkInit.start {
                span(will, start, gtkInit.end, source: gtkInit.source, tid: gtkInit.thread)
                if let end = gtkInit.end, let gtkMain { span(did, end, gtkMain, source: gtkInit.source, tid: gtkInit.thread) }
            }
            for (toolkit, next) in [(qt, qtExec), (sdl, sdlWindow), (tk, tkMainLoop)] {
                guard let start = toolkit.start else { continue }
                span(will, start, toolkit.end, source: toolkit.source, tid: toolkit.thread)
                if let end = toolkit.end, let next { span(did, end, next, source: toolkit.source, tid: toolkit.thread) }
            }
            // After the app phases: on a tie the outer phase comes first.
            if let start = gtkInit.start {
                span(LaunchPhase.gtkInit, start, gtkInit.end, source: gtkInit.source, tid: gtkInit.thread)
            }
            if let pythonMain, let pythonRun {
                span(LaunchPhase.pythonStartup, pythonMain, pythonRun, source: "python", tid: pid)
            }
        }
    }
}
