import CLaunchprof
import LaunchprofELF
import LaunchprofReport
import LaunchprofSampling

#if canImport(Glibc)
import Glibc
#endif

/// Finds what a program's pre-main code does that is unsafe to prewarm, in one untimed launch
/// traced from the exec to `main` (then killed): every system call stops (PTRACE_SYSCALL) and
/// the clock entry points carry breakpoints, because most clock reads never enter the kernel
/// (the vDSO serves them). Each hazard names the function that made it, found by unwinding the
/// stopped thread past libc, the loader and the vDSO. Its processes are a `TracedProcesses`, as
/// the tracer's are: spawned, tracked through forks and clones, killed and reaped the same way.
/// All calls must come from one thread (ptrace has thread affinity).
public struct HazardScanner {
    public struct Request: Sendable {
        public var executable: String
        public var arguments: [String]
        public var environment: [String]
        public var workingDirectory: String?
        public var plan: ImagePlan
        /// The user's home: opens under it (and `~/.ssh`, keyrings) are user data.
        public var home: String?

        public init(executable: String, arguments: [String], environment: [String], plan: ImagePlan, home: String?) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
            self.plan = plan
            self.home = home
        }
    }

    public init() {}

    /// Scans one launch up to `main`. Returns the hazards in the order first met, each once.
    public func scan(_ request: Request) throws(TracerError) -> [PrewarmHazard] {
        var scan = try HazardScan.spawn(request)
        defer { scan.processes.killAndReap() }
        try scan.run()
        return scan.hazards
    }
}

private struct HazardScan {
    let request: Request
    /// The scanned child and what it created, all traced.
    var processes: TracedProcesses
    var pid: pid_t { processes.child }
    var hazards: [PrewarmHazard] = []
    /// The syscall each thread entered (exit stops do not say).
    var entered: [pid_t: UInt64] = [:]
    /// Breakpoints on libc and vDSO entry points: address → (name, original byte, takes a clock id).
    var clockBreakpoints: [UInt64: (name: String, original: UInt8, clockID: Bool)] = [:]
    /// Threads inside pthread_create: its clone is already reported, with pthread_create's caller
    /// (an unwind from inside clone3 does not get past libc).
    var creatingThreads: Set<pid_t> = []
    var mainAddress: UInt64 = 0
    var mainOriginal: UInt8 = 0
    var libcArmed = false
    var vdsoArmed = false
    var images: [String: ELFImage] = [:]

    typealias Request = HazardScanner.Request

    static func spawn(_ request: Request) throws(TracerError) -> HazardScan {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        var spawn = TracedProcesses.Spawn(
            executable: request.executable, arguments: request.arguments, environment: request.environment,
            workingDirectory: request.workingDirectory)
        (spawn.standardInput, spawn.standardOutput, spawn.standardError) = (null, null, null)
        return HazardScan(request: request, processes: try TracedProcesses.spawn(spawn).processes)
    }

    mutating func run() throws(TracerError) {
        guard let first = try Ptrace.wait(pid), first.kind == LP_WAIT_STOPPED else { return }
        try Ptrace.setOptions(pid, Int32(
            LP_PTRACE_O_EXITKILL | LP_PTRACE_O_TRACESYSGOOD | LP_PTRACE_O_TRACECLONE
                | LP_PTRACE_O_TRACEFORK | LP_PTRACE_O_TRACEVFORK))
        guard let main = request.plan.main else {
            throw .unexpectedStop(pid: pid, detail: "no main found in \(request.executable): the hazard scan needs it to know where pre-main ends")
        }
        let maps = ProcessMappings.files(pid)
        let programBase = maps.first { $0.path == request.plan.programPath && $0.offset == 0 }?.start ?? 0
        mainAddress = (request.plan.isPositionIndependent ? programBase : 0) &+ main
        mainOriginal = try Ptrace.insertBreakpoint(pid, at: mainAddress)
        // The tracee to resume before the next wait: the one in the stop last handled (resuming
        // another tracee blindly could swallow a stop not yet waited for).
        var stopped = pid
        var signal: Int32 = 0
        while true {
            do {
                try Ptrace.syscall(stopped, signal: signal)
            } catch where error.processIsGone {}
            signal = 0
            let stop: lp_wait_result
            switch try processes.nextStop() {
            case .childEnded(let exit):
                processes.ended(exit.pid)
                return  // it ended before main
            case .handled(let handled):
                stopped = handled.pid
                continue
            case .stopped(let next):
                stop = next
            }
            stopped = stop.pid
            if stop.event != 0 { continue }
            if stop.value == SIGTRAP | 0x80 {
                try syscallStop(stop.pid)
                continue
            }
            if stop.value == SIGTRAP {
                let registers = try Ptrace.registers(stop.pid)
                let address = registers.pc &- 1
                if address == mainAddress { return }  // pre-main is over
                if let breakpoint = clockBreakpoints[address] {
                    try clockRead(stop.pid, breakpoint, address: address, registers: registers)
                    continue
                }
            }
            if Ptrace.isGroupStop(stop.pid) { continue }
            signal = stop.value
        }
    }

    // MARK: System calls

    private mutating func syscallStop(_ tid: pid_t) throws(TracerError) {
        var info = lp_syscall_stop()
        guard lp_syscall_info(tid, &info) == 0 else { return }
        if info.op == 2 {  // exit
            if entered.removeValue(forKey: tid) == 9 /* mmap */, !libcArmed || !vdsoArmed { try armClocks(tid) }
            return
        }
        guard info.op == 1 else { return }
        entered[tid] = info.nr
        let args = info.args
        switch info.nr {
        case 42:  // connect
            record(tid, .network, "connect", socketAddress(tid, args.1, length: args.2))
        case 2, 257, 437:  // open, openat, openat2
            let path = string(tid, info.nr == 2 ? args.0 : args.1)
            if isUserData(path) { record(tid, .userData, info.nr == 2 ? "open" : "openat", path) }
        case 56:  // clone
            if args.0 & 0x10000 != 0, creatingThreads.remove(tid) == nil { record(tid, .thread, "clone", "CLONE_THREAD") }
        case 435:  // clone3: flags are the first field of struct clone_args
            if let flags = try? Ptrace.readWord(tid, at: args.0), flags & 0x10000 != 0, creatingThreads.remove(tid) == nil {
                record(tid, .thread, "clone3", "CLONE_THREAD")
            }
        case 318:
            record(tid, .randomness, "getrandom", "\(args.1) bytes")
        case 73:
            record(tid, .fileLock, "flock", "fd \(args.0) operation \(args.1)")
        case 72 where [6, 7, 37, 38].contains(args.1):  // F_SETLK, F_SETLKW, F_OFD_SETLK(W)
            record(tid, .fileLock, "fcntl", "fd \(args.0) \(args.1 >= 37 ? "F_OFD_SETLK" : "F_SETLK")\(args.1 % 2 == 0 ? "" : "W")")
        default:
            break
        }
    }

    private func isUserData(_ path: String) -> Bool {
        if path.contains("/.ssh/") || path.hasSuffix("/.ssh") || path.contains("keyring") { return true }
        guard let home = request.home, !home.isEmpty, home != "/" else { return false }
        return path.hasPrefix(home + "/")
    }

    // MARK: Clock reads

    /// Once libc (and the vDSO) are mapped, breakpoints on their clock entry points: libc's
    /// `clock_gettime` (it calls the vDSO itself), and the vDSO's `gettimeofday` and `time`
    /// (glibc binds those straight to the vDSO through IFUNCs, so libc's symbols never run).
    private mutating func armClocks(_ tid: pid_t) throws(TracerError) {
        let lines = ProcessMappings.lines(pid)
        if !libcArmed, let libc = lines.first(where: { $0.name.hasSuffix("/libc.so.6") && $0.offset == 0 }) {
            // Text must be mapped executable before the int3 can go in.
            if lines.contains(where: { $0.name == libc.name && $0.isExecutable }),
                let image = image(libc.name), let address = image.symbolAddress("clock_gettime")
            {
                libcArmed = true
                let at = libc.start &+ address
                clockBreakpoints[at] = ("clock_gettime", try Ptrace.insertBreakpoint(pid, at: at), true)
                if let create = image.symbolAddress("pthread_create") {
                    let at = libc.start &+ create
                    clockBreakpoints[at] = ("pthread_create", try Ptrace.insertBreakpoint(pid, at: at), false)
                }
            }
        }
        if !vdsoArmed, let vdso = lines.first(where: { $0.name == "[vdso]" }) {
            vdsoArmed = true
            if let bytes = try? Ptrace.read(pid, at: vdso.start, count: Int(vdso.end - vdso.start)) {
                for (name, offset) in VDSOSymbols.find(["__vdso_gettimeofday", "__vdso_time"], in: bytes) {
                    let at = vdso.start &+ offset
                    clockBreakpoints[at] = (String(name.dropFirst("__vdso_".count)), try Ptrace.insertBreakpoint(pid, at: at), false)
                }
            }
        }
    }

    private mutating func clockRead(
        _ tid: pid_t, _ breakpoint: (name: String, original: UInt8, clockID: Bool), address: UInt64,
        registers: lp_registers
    ) throws(TracerError) {
        let wallClocks: [UInt64: String] = [0: "CLOCK_REALTIME", 5: "CLOCK_REALTIME_COARSE", 8: "CLOCK_REALTIME_ALARM", 11: "CLOCK_TAI"]
        if breakpoint.name == "pthread_create" {
            creatingThreads.insert(tid)
            let caller = try Ptrace.readWord(tid, at: registers.sp)
            record(tid, .thread, "pthread_create", "CLONE_THREAD", callerAddress: caller)
        } else if !breakpoint.clockID || wallClocks[registers.arg0] != nil {
            let detail = breakpoint.clockID ? wallClocks[registers.arg0] ?? "" : "wall clock (vDSO)"
            // At a function's first instruction the return address is on top of the stack.
            let caller = try Ptrace.readWord(tid, at: registers.sp)
            record(tid, .wallClock, breakpoint.name, detail, callerAddress: caller)
        }
        // Step over the breakpoint with the original byte, then put the int3 back.
        try Ptrace.removeBreakpoint(pid, at: address, original: breakpoint.original)
        try Ptrace.setPC(tid, address)
        try Ptrace.singleStep(tid)
        _ = try Ptrace.wait(tid)
        _ = try Ptrace.insertBreakpoint(pid, at: address)
    }

    // MARK: Naming the caller

    private mutating func record(
        _ tid: pid_t, _ kind: PrewarmHazard.Kind, _ syscall: String, _ detail: String,
        callerAddress: UInt64? = nil
    ) {
        let maps = ProcessMappings.files(pid)
        var frames = StackUnwinder.unwindStopped(tid)
        if let callerAddress { frames.insert(callerAddress, at: 0) }
        func object(_ address: UInt64) -> String? {
            maps.first { $0.start <= address && address < $0.end }.map { $0.path.split(separator: "/").last.map(String.init) ?? $0.path }
        }
        // The first frame outside the C library, the loader, the vDSO and the language runtimes
        // (libstdc++, the Swift runtime) is the app's: the call is its. Without one, the runtime
        // made the call on its own behalf (malloc's tcache key, hashing seeds): a note, named by
        // the first frame outside the C library and the loader.
        let author = frames.first { address in object(address).map { !StackSymbolizer.isSystemObject($0) } ?? false }
        let runtime = ["libc.so", "ld-linux", "libpthread"]
        let frame = author ?? frames.first { address in
            object(address).map { name in !name.hasPrefix("[") && !runtime.contains { name.hasPrefix($0) } } ?? false
        } ?? frames.first ?? 0
        let (object, function) = name(frame, maps: maps)
        let hazard = author != nil
            ? PrewarmHazard(kind: kind, syscall: syscall, detail: detail, object: object, function: function)
            : PrewarmHazard(
                kind: kind, syscall: syscall, detail: detail, object: object, function: function, severity: .note,
                why: PrewarmHazard.runtimeWhy(object))
        if !hazards.contains(hazard) { hazards.append(hazard) }
    }

    private mutating func name(_ address: UInt64, maps: [StackSymbolizer.Mapping]) -> (object: String, function: String) {
        guard let mapping = maps.first(where: { $0.start <= address && address < $0.end }) else {
            return ("?", "0x" + String(address, radix: 16))
        }
        let object = mapping.path.split(separator: "/").last.map(String.init) ?? mapping.path
        let base = maps.first { $0.path == mapping.path && $0.offset == 0 }?.start ?? mapping.start
        let offset = address &- base
        // A return address points after the call: look up the byte before it.
        if let image = image(mapping.path) {
            let address = image.kind == .executable || image.kind == .staticExecutable ? address : offset
            if let found = image.functionName(containing: address &- 1) { return (object, found.name) }
        }
        return (object, "\(object)+0x" + String(offset, radix: 16))
    }

    private mutating func image(_ path: String) -> ELFImage? {
        if let image = images[path] { return image }
        let image = try? ELFImage.read(path: path)
        images[path] = image
        return image
    }

    // MARK: Reading the tracee

    private func string(_ tid: pid_t, _ address: UInt64) -> String {
        var bytes: [UInt8] = []
        var at = address
        while bytes.count < 4096, let chunk = try? Ptrace.read(tid, at: at, count: 64) {
            if let end = chunk.firstIndex(of: 0) { return String(decoding: bytes + chunk[..<end], as: UTF8.self) }
            bytes += chunk
            at &+= 64
        }
        // A string near the end of a mapping: read it byte by byte.
        while bytes.count < 4096, let byte = try? Ptrace.read(tid, at: at, count: 1), byte[0] != 0 {
            bytes.append(byte[0])
            at &+= 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func socketAddress(_ tid: pid_t, _ address: UInt64, length: UInt64) -> String {
        guard let bytes = try? Ptrace.read(tid, at: address, count: Int(min(max(length, 2), 110))) else { return "?" }
        let family = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        switch family {
        case 2 where bytes.count >= 8:  // AF_INET
            let port = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
            return "\(bytes[4]).\(bytes[5]).\(bytes[6]).\(bytes[7]):\(port)"
        case 10 where bytes.count >= 24:  // AF_INET6
            let port = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
            let groups = stride(from: 8, to: 24, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            return "[\(groups.joined(separator: ":"))]:\(port)"
        case 1:  // AF_UNIX
            let path = bytes.dropFirst(2)
            if path.first == 0 { return "unix:@" + String(decoding: path.dropFirst().prefix { $0 != 0 }, as: UTF8.self) }
            return "unix:" + String(decoding: path.prefix { $0 != 0 }, as: UTF8.self)
        default:
            return "family \(family)"
        }
    }
}
