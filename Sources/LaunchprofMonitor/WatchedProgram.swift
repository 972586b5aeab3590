import LaunchprofELF
import LaunchprofReport
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// A program the monitor watches (`--program PATH`) and what it probes for it, planned once from
/// its ELF files: the launch boundaries in its own file (its entry, first initializer and
/// `main`, which only its own processes run), optionally the loader's and its libraries'
/// (`loaderPhases`: every process that maps those files pays for them), and the USDT probes of
/// its hooks (provider `launchprof`, in its own file or a library of its closure).
public struct WatchedProgram: Sendable {
    /// One uprobe: a file offset and what a hit there means.
    public struct Probe: Sendable, Equatable {
        public enum Meaning: Sendable, Equatable {
            /// Launch boundaries; `ownFile`: in the program's own file (a hit names the program).
            case boundaries([Boundary], ownFile: Bool)
            /// A hook's USDT probe; `argument`: where its string argument is, in tracefs's
            /// syntax (nil for `first_frame`, or a location the monitor cannot read).
            case hook(HookEvent.Kind, argument: String?)
        }

        public var path: String
        public var offset: UInt64
        public var meaning: Meaning
    }

    /// The path as given and as the kernel knows the file.
    public var givenPath: String
    public var path: String
    public var device: UInt64
    public var inode: UInt64
    public var buildID: String?
    /// The file names (last path components) of the given and the real path: how an exec that
    /// never reached the program's own code (a library missing) is still told to be its.
    public var fileNames: Set<String>
    public var probes: [Probe]
    /// Phases no probe observes, and why (a stripped `main`, no loader probes).
    public var unobservable: [(phase: String, reason: String)]
    /// Its hooks' USDT probes were found (false: hook phases only reach `launchprof run`).
    public var hasHookProbes: Bool

    /// Plans the probes for `path`.
    public static func plan(_ path: String, loaderPhases: Bool) throws(MonitorError) -> WatchedProgram {
        guard let resolved = realpath(path, nil) else { throw .cannotWatch(path: path, reason: MonitorError.text(errno)) }
        let real = String(cString: resolved)
        free(resolved)
        var status = stat()
        guard stat(real, &status) == 0 else { throw .cannotWatch(path: path, reason: MonitorError.text(errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .cannotWatch(path: path, reason: "not a regular file") }
        let image: ELFImage
        do {
            image = try ELFImage.read(path: real)
        } catch {
            throw .cannotWatch(path: path, reason: "\(error)")
        }
        let closure = DependencyResolver.system().resolve(program: image, environment: [:])
        let plan = ImagePlanner.plan(program: image, closure: closure)

        var probes: [Probe] = []
        func add(_ probe: Probe) {
            if let index = probes.firstIndex(where: { $0.path == probe.path && $0.offset == probe.offset }) {
                if case .boundaries(let old, let own) = probes[index].meaning, case .boundaries(let new, _) = probe.meaning {
                    probes[index].meaning = .boundaries(old + new.filter { !old.contains($0) }, ownFile: own)
                }
            } else {
                probes.append(probe)
            }
        }
        var unobservable = plan.unobservable + plan.uprobeUnobservable
        var hasEntry = false
        for target in plan.uprobes {
            let own = target.path == real
            if target.action == .entry { hasEntry = true }
            if !own && !loaderPhases { continue }
            add(Probe(path: target.path, offset: target.offset, meaning: .boundaries([target.action], ownFile: own)))
        }
        // The entry (libc's start-up begins) costs only this program's processes: always probed.
        if !hasEntry, let offset = Self.placedOffset(image, address: image.entry) {
            add(Probe(path: real, offset: offset, meaning: .boundaries([.entry], ownFile: true)))
        }
        if !loaderPhases, image.kind.usesLoader {
            let reason =
                "not probed: the loader's probes would cost every process on the machine (launchprof monitor --loader-phases)"
            for phase in [LaunchPhase.loaderMap, LaunchPhase.loaderRelocate, LaunchPhase.loaderInit]
            where !unobservable.contains(where: { $0.phase == phase }) {
                unobservable.append((phase, reason))
            }
        }

        var hasHookProbes = false
        for object in closure.objects {
            for probe in object.sdtProbes where probe.provider == "launchprof" {
                guard let kind = Self.hookKind(probe.name) else { continue }
                hasHookProbes = true
                let argument = kind == .firstFrame ? nil : probe.arguments.first.flatMap(Self.stringArgument)
                add(Probe(path: object.path, offset: probe.fileOffset, meaning: .hook(kind, argument: argument)))
            }
        }
        let fileNames = Set([path, real].map(Self.fileName))
        return WatchedProgram(
            givenPath: path, path: real, device: UInt64(status.st_dev), inode: UInt64(status.st_ino), buildID: image.buildID,
            fileNames: fileNames, probes: probes, unobservable: unobservable, hasHookProbes: hasHookProbes)
    }

    /// The last component of a path.
    public static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Where a probe for the function at `address` goes (see `ProbePlacement`).
    static func placedOffset(_ image: ELFImage, address: UInt64) -> UInt64? {
        let code = image.bytes(atAddress: address, count: 64)
        guard let offset = image.fileOffset(ofAddress: address) else { return nil }
        return offset + ProbePlacement.place(code).delta
    }

    static func hookKind(_ name: String) -> HookEvent.Kind? {
        switch name {
        case "begin": .begin
        case "end": .end
        case "first_frame": .firstFrame
        case "extend": .extend
        case "finish_extend": .finishExtend
        default: nil
        }
    }

    /// A string argument's SDT location (`8@%rdi`, `8@-16(%rbp)`, `8@(%rbx)`) as a tracefs
    /// fetch (`name=+0(%di):string`): the string where the pointer points. nil for a constant or
    /// an indexed location.
    static func stringArgument(_ location: String) -> String? {
        guard let at = location.firstIndex(of: "@"), location[..<at] == "8" else { return nil }
        let operand = location[location.index(after: at)...]
        func register(_ text: Substring) -> String? {
            guard text.hasPrefix("%") else { return nil }
            let name = text.dropFirst()
            let table = [
                "rax": "ax", "rbx": "bx", "rcx": "cx", "rdx": "dx", "rsi": "si", "rdi": "di", "rbp": "bp", "rsp": "sp",
            ]
            if let mapped = table[String(name)] { return "%" + mapped }
            if name.hasPrefix("r"), let number = Int(name.dropFirst()), (8...15).contains(number) { return "%r\(number)" }
            return nil
        }
        if let direct = register(operand) { return "name=+0(\(direct)):string" }
        // OFFSET(%reg): the pointer is in memory at reg + OFFSET.
        guard operand.hasSuffix(")"), let open = operand.firstIndex(of: "(") else { return nil }
        let offsetText = operand[..<open]
        let inner = operand[operand.index(after: open)..<operand.index(before: operand.endIndex)]
        guard !inner.contains(","), let base = register(inner) else { return nil }
        let offset = offsetText.isEmpty ? 0 : Int(offsetText)
        guard let offset, abs(offset) < 1 << 20 else { return nil }
        return "name=+0(\(offset >= 0 ? "+" : "")\(offset)(\(base))):string"
    }
}
