/// One uprobe past the pre-main boundaries: at a function's entry or its return, in the loader
/// (each `dlopen`'s steps), a toolkit (GTK's, Qt's, SDL's launch calls) or an interpreter
/// (Python's SDT import probes), with the values the kernel copies out of the process at each
/// hit (a file name, a module name). `RuntimeProbePlanner` makes them from the ELF files;
/// `RuntimeRecorder` turns their hits into spans.
public struct RuntimeProbe: Sendable, Hashable {
    /// The probed file (a real path) and file offset.
    public var path: String
    public var offset: UInt64
    /// A return probe (uretprobe) fires as the function returns; it is placed on the function's
    /// first instruction, where the kernel takes over the return address.
    public var isReturn: Bool
    /// The file offset of an SDT semaphore the kernel increments while the probe is held (the
    /// probe site runs only while it is non-zero).
    public var referenceCounter: UInt64?
    /// What the kernel copies out at each hit, in order.
    public var fetch: [FetchedArgument]
    public var role: Role
    /// Which library or interpreter it belongs to, as reports name it: `loader`, `gtk3`, `qt5`,
    /// `python` …
    public var source: String
    /// The kernel emulates the probed instruction (a cheap hit) instead of single-stepping it.
    public var emulated: Bool

    public init(
        path: String, offset: UInt64, isReturn: Bool = false, referenceCounter: UInt64? = nil,
        fetch: [FetchedArgument] = [], role: Role, source: String, emulated: Bool
    ) {
        self.path = path
        self.offset = offset
        self.isReturn = isReturn
        self.referenceCounter = referenceCounter
        self.fetch = fetch
        self.role = role
        self.source = source
        self.emulated = emulated
    }

    /// What a hit of the probe marks.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// libc's `dlopen`, `dlmopen` or `__libc_dlopen_mode` called: fetches the file name and
        /// the caller's return address.
        case dlopenCall
        /// … and its return: fetches the handle (0: it failed).
        case dlopenReturn
        /// The loader relocates an object (`_dl_relocate_object`).
        case loaderRelocate
        /// The loader starts running the initializers of a load (`_dl_init`).
        case loaderInit
        /// The loader's `call_init` for one object: fetches its name.
        case loaderObjectInit
        /// GApplication registers (emitting `startup` on the primary instance).
        case applicationRegister, applicationRegisterReturn
        /// GApplication activates (emits `activate`) or opens files (`open`).
        case applicationActivate, applicationActivateReturn
        /// GTK initialises (`gtk_init_check`, which `gtk_init` calls).
        case gtkInit, gtkInitReturn
        /// GTK 3's main loop is entered (`gtk_main`).
        case gtkMain
        /// A Qt application object's public constructor (QCoreApplication, QGuiApplication,
        /// QApplication) runs.
        case qtConstructor, qtConstructorReturn
        /// Qt's event loop starts (`QCoreApplication::exec`).
        case qtExec
        /// SDL initialises (`SDL_Init`).
        case sdlInit, sdlInitReturn
        /// SDL creates a window (`SDL_CreateWindow`) — the first one ends its launch set-up.
        case sdlCreateWindowReturn
        /// Tk's interpreter and main window are made (`Tk_Init`), its event loop entered
        /// (`Tk_MainLoop`).
        case tkInit, tkInitReturn, tkMainLoop
        /// Python's `main` (`Py_BytesMain`) and the start of the script, command or module
        /// (`_PyRun_SimpleFileObject`, `PyRun_SimpleStringFlags`, `_PyRun_AnyFileObject`).
        case pythonMain, pythonRun
        /// Python's SDT `import__find__load__start` / `__done`: fetch the module's name.
        case pythonImportStart, pythonImportDone
    }

    /// A probe of the loader's or libc's, which every dynamically linked process maps: the holder
    /// keeps it while it lives (as `UprobeTarget.isShared`); a toolkit's or an interpreter's goes
    /// once no session has held it for the linger.
    public var isShared: Bool {
        switch role {
        case .dlopenCall, .dlopenReturn, .loaderRelocate, .loaderInit, .loaderObjectInit: true
        default: false
        }
    }

    /// Probes are shared by file, offset and kind: one event serves every plan that names it.
    public struct Key: Sendable, Hashable {
        public var path: String
        public var offset: UInt64
        public var isReturn: Bool
    }

    public var key: Key { Key(path: path, offset: offset, isReturn: isReturn) }
}

extension FetchedArgument {
    /// An SDT argument's location (`8@%rax`, `-4@%edx`) as a register value; nil for a memory
    /// or constant location.
    public init?(sdtLocation: String, kind: Kind) {
        guard let at = sdtLocation.firstIndex(of: "@") else { return nil }
        let location = sdtLocation[sdtLocation.index(after: at)...]
        guard location.hasPrefix("%") else { return nil }
        // %rax, %eax → ax; %r8, %r8d → r8; %rsi, %esi → si
        var name = Substring(location.dropFirst())
        if name.first == "r", name.dropFirst().first?.isNumber == true {
            if let last = name.last, "dwb".contains(last) { name = name.dropLast() }
        } else if name.count == 3, name.first == "r" || name.first == "e" {
            name = name.dropFirst()
        }
        guard let register = Register(rawValue: String(name)) else { return nil }
        // A string argument is the string's address: the string is read from where it points.
        self.init(register, dereferences: kind == .string ? [0] : [], kind: kind)
    }
}

/// One hit of a runtime probe: which probe, the thread, when, and the values fetched (in the
/// probe's `fetch` order; a value the kernel could not read is nil).
public struct RuntimeProbeHit: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case integer(UInt64)
        case string(String)
    }

    public var key: RuntimeProbe.Key
    public var thread: Int32
    public var timeNs: UInt64
    public var values: [Value?]

    public init(key: RuntimeProbe.Key, thread: Int32, timeNs: UInt64, values: [Value?] = []) {
        self.key = key
        self.thread = thread
        self.timeNs = timeNs
        self.values = values
    }

    func string(_ index: Int) -> String? {
        guard index < values.count, case .string(let text)? = values[index] else { return nil }
        return text
    }

    func integer(_ index: Int) -> UInt64? {
        guard index < values.count, case .integer(let value)? = values[index] else { return nil }
        return value
    }
}
