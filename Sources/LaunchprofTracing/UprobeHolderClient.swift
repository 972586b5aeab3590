import LaunchprofSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A launchprof process's connection to the uprobe holder (`UprobeHolder`), started when none
/// runs. A launchprof process opens no perf event of its own (but to measure a hit's cost in
/// itself), so it never waits on the kernel's global `event_mutex`, which a uprobe release holds
/// for ~0.1 s per probe.
///
/// The holder is trusted only when the kernel vouches for it: its socket is in a directory no
/// other user can write (`PrivateDirectory`), and the process listening there runs as this
/// user (SO_PEERCRED). Anything else is refused with a line on stderr, and launchprof measures
/// without a holder (PMU uprobes). Its replies are decoded as untrusted input
/// (`UprobeHolderProtocol`): a malformed one ends the connection.
public final class UprobeHolderClient: Sendable {
    /// The executable started as the holder: launchprof itself (set by
    /// `UprobeHolder.serveIfStartedAsHolder`), else — a test runner, another program using this
    /// module — the `launchprof` beside this process's executable.
    public static let holderExecutable = Mutex<String?>(nil)

    /// The socket's name in the user's private directory: one holder per user and protocol version.
    static let standardSocketName = "uprobe-holder-\(UprobeHolderProtocol.version).sock"

    /// The holder's process id (as it says; the kernel's view of it is checked at connect).
    public let holderPID: Int32
    private let connection: Int32
    /// One request and its replies at a time (sessions run on several threads); the frames
    /// received and not yet decoded.
    private let exchange = Mutex(UprobeHolderProtocol.FrameReader())
    /// Probes this process has had held: their tracepoint ids.
    private let held = Mutex<[HeldKey: UInt64]>([:])
    /// Runtime probes this process has had held: their tracepoint ids and payload layouts.
    private let heldRuntime = Mutex<[RuntimeProbe: (UInt64, TraceEventLayout)]>([:])
    /// A reply that did not decode: the connection is not used again.
    private let broken = Atomic<Bool>(false)

    private struct HeldKey: Hashable {
        var path: String
        var offset: UInt64
        var scope: UInt8
    }

    private init(connection: Int32, holderPID: Int32) {
        self.connection = connection
        self.holderPID = holderPID
    }

    deinit { close(connection) }

    private static let sharedClient = Mutex<UprobeHolderClient??>(nil)

    /// The process's connection, made on first use; nil where tracefs or the holder is
    /// unavailable or untrusted (launchprof then uses PMU uprobes, released in the background).
    public static func shared() -> UprobeHolderClient? {
        sharedClient.withLock { cached in
            if let cached { return cached }
            let client = connect()
            cached = .some(client)
            return client
        }
    }

    /// The process's connection if one was made already (nil otherwise, and never made here).
    public static func existing() -> UprobeHolderClient? {
        sharedClient.withLock { $0 ?? nil }
    }

    // MARK: Requests

    /// Tells the holder a launch is about to be spawned: it releases no probe until
    /// `launchEnded` (a release stalls every fork and exec on the machine). Returns once no
    /// release is under way — one round trip, a wait only when a release runs.
    public func launchBegins() {
        _ = request(.launchBegins)
    }

    /// Tells the holder the launch `launchBegins` announced has ended (its processes are gone).
    public func launchEnded() {
        _ = request(.launchEnded, replies: 0)
    }

    /// Has the holder keep the probe at `path`+`offset` registered; its tracepoint id, for
    /// `lp_tracepoint_probe_open`. `lingers`: a probe of the loader or libc (kept while the
    /// holder lives); otherwise released once no launchprof has held it for the linger.
    public func hold(path: String, offset: UInt64, scope: UprobeHolderProtocol.Scope, lingers: Bool) -> UInt64? {
        guard UprobeHolderProtocol.pathProblem(Array(path.utf8)) == nil else { return nil }
        let key = HeldKey(path: path, offset: offset, scope: scope.rawValue)
        if let id = held.withLock({ $0[key] }) { return id }
        guard case .held(let tracepoint)? = request(.hold(path: path, offset: offset, scope: scope, lingers: lingers)).first
        else { return nil }
        held.withLock { $0[key] = tracepoint }
        return tracepoint
    }

    /// Has the holder keep the runtime probe `probe` registered system-wide, its hits sampled
    /// with the values it fetches: its tracepoint id and where those values lie in a hit's
    /// payload. nil where the holder refused it (the errno is not needed: the phases it would
    /// give are reported absent either way).
    public func hold(_ probe: RuntimeProbe) -> (tracepoint: UInt64, layout: TraceEventLayout)? {
        guard UprobeHolderProtocol.pathProblem(Array(probe.path.utf8)) == nil else { return nil }
        if let held = heldRuntime.withLock({ $0[probe] }) { return held }
        let definition = UprobeHolderProtocol.RuntimeDefinition(
            path: probe.path, offset: probe.offset, isReturn: probe.isReturn, referenceCounter: probe.referenceCounter,
            fetch: probe.fetch, lingers: probe.isShared)
        guard case .heldRuntime(let tracepoint, let fields)? = request(.holdRuntime(definition)).first,
            fields.count == probe.fetch.count
        else { return nil }
        let held = (tracepoint, TraceEventLayout(payloadFields: fields))
        heldRuntime.withLock { $0[probe] = held }
        return held
    }

    /// Has the holder keep `pid`'s hits from `sinceNs` on apart from everyone else's, until they
    /// are drained. Sent at the spawn, before the child runs; nothing is waited for.
    public func watch(pid: Int32, sinceNs: UInt64) {
        _ = request(.watch(pid: pid, sinceNs: sinceNs), replies: 0)
    }

    /// Every hit of each process since its time on the system-wide probes, oldest first (the
    /// runtime probes' apart, with their payloads), and how many may be missing. One exchange
    /// for any number of processes. nil where it failed.
    public func drain(_ queries: [UprobeHolderProtocol.ProcessHits.Query]) -> [UprobeHolderProtocol.ProcessHits]? {
        guard !queries.isEmpty else { return [] }
        var all: [UprobeHolderProtocol.ProcessHits] = []
        // In batches the protocol allows.
        for start in stride(from: 0, to: queries.count, by: UprobeHolderProtocol.maxDrainBatch) {
            let batch = Array(queries[start..<min(start + UprobeHolderProtocol.maxDrainBatch, queries.count)])
            let replies = request(.drain(batch), replies: batch.count)
            guard replies.count == batch.count else { return nil }
            for (query, reply) in zip(batch, replies) {
                guard case .hits(let hits) = reply, hits.pid == query.pid else {
                    fail("a drain answered with another process's hits")
                    return nil
                }
                all.append(hits)
            }
        }
        return all
    }

    /// The hit costs an earlier launchprof measured on this host while this holder ran.
    public var calibration: UprobeHolderProtocol.Calibration? {
        guard case .calibration(let stored)? = request(.calibration).first else { return nil }
        return stored
    }

    public func store(_ calibration: UprobeHolderProtocol.Calibration) {
        _ = request(.storeCalibration(calibration), replies: 0)
    }

    /// Sends `message` and reads `replies` replies; fewer when the exchange failed.
    private func request(_ message: UprobeHolderProtocol.Request, replies: Int = 1) -> [UprobeHolderProtocol.Reply] {
        guard !broken.load(ordering: .relaxed) else { return [] }
        return exchange.withLock { frames in
            guard Self.send(connection, UprobeHolderProtocol.encode(message)) else {
                fail("the connection closed")
                return []
            }
            var received: [UprobeHolderProtocol.Reply] = []
            while received.count < replies {
                switch Self.receive(connection, &frames) {
                case .success(let reply): received.append(reply)
                case .failure(let error):
                    fail(error.reason)
                    return received
                }
            }
            return received
        }
    }

    private func fail(_ reason: String) {
        guard !broken.exchange(true, ordering: .relaxed) else { return }
        Self.say("the uprobe holder (process \(holderPID)) failed: \(reason); measuring without it from here")
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// The next reply, read and decoded as untrusted input.
    private static func receive(
        _ fd: Int32, _ frames: inout UprobeHolderProtocol.FrameReader
    ) -> Result<UprobeHolderProtocol.Reply, UprobeHolderProtocol.Malformed> {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            do throws(UprobeHolderProtocol.Malformed) {
                if let payload = try frames.next() { return .success(try UprobeHolderProtocol.decodeReply(payload)) }
            } catch {
                return .failure(error)
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .failure(.init(reason: "it did not answer in time")) }
            guard count > 0 else { return .failure(.init(reason: count == 0 ? "it closed the connection" : String(cString: strerror(errno)))) }
            frames.append(chunk[..<count])
        }
    }

    // MARK: Connecting

    /// Where the socket is: the standard name in the user's private directory, or what
    /// `LAUNCHPROF_UPROBE_HOLDER` names — a name in that directory, or a path (tests use their
    /// own holders).
    private static var socketLocation: (directory: String, name: String, standard: Bool) {
        let standard = PrivateDirectory.standardPath
        guard let named = getenv("LAUNCHPROF_UPROBE_HOLDER").map({ String(cString: $0) }), !named.isEmpty else {
            return (standard, standardSocketName, true)
        }
        guard let slash = named.lastIndex(of: "/") else { return (standard, named, true) }
        let directory = String(named[..<slash])
        return (directory.isEmpty ? "/" : directory, String(named[named.index(after: slash)...]), false)
    }

    /// Whether this process said already why it measures without the holder.
    private static let said = Mutex(false)

    private static func say(_ text: String) {
        let first = said.withLock { said in
            defer { said = true }
            return !said
        }
        if first { StatusLine.say(text) }
    }

    private static func refuse(_ reason: String) {
        say("not using the uprobe holder: \(reason); measuring without it (PMU uprobes)")
    }

    private static func connect() -> UprobeHolderClient? {
        guard let tracefs = UprobeHolder.tracefsRoot() else { return nil }
        let location = socketLocation
        let directory: PrivateDirectory
        do throws(PrivateDirectory.Untrusted) {
            // The standard directory is made when missing; one that is named must exist already.
            directory = try PrivateDirectory.open(location.directory, create: location.standard)
        } catch {
            refuse("its socket's directory \(error); a holder is trusted only in a directory no other user can write")
            return nil
        }
        // A holder that is ending accepts and then closes: one more try finds it gone.
        for _ in 0..<2 {
            var connection = UnixSocket.connect(directory.entry(location.name))
            if case .failure(let error) = connection, error.errno == ENOENT || error.errno == ECONNREFUSED {
                // A holder that ended may still be releasing its probes (lp-uprobe-free): a new
                // one's registrations, and every fork, would queue behind that.
                UprobeSupport.awaitEarlierReleases()
                connection = start(in: directory, name: location.name, tracefs: tracefs)
            }
            guard case .success(let fd) = connection else { return nil }
            // The kernel says who listens: only a holder of this same user is sent anything.
            guard let peer = UnixSocket.peer(fd), peer.uid == geteuid() else {
                let peer = UnixSocket.peer(fd)
                close(fd)
                refuse(
                    "\(location.directory)/\(location.name) is served by "
                        + (peer.map { "process \($0.pid) of uid \($0.uid)" } ?? "a process the kernel would not name")
                        + ", not by uid \(geteuid())")
                return nil
            }
            var frames = UprobeHolderProtocol.FrameReader()
            // A holder greets once no release of its is under way (it waits grace periods,
            // ~0.1 s a probe); later replies may wait for the kernel too, but not forever.
            setReceiveTimeout(fd, seconds: 30)
            guard send(fd, UprobeHolderProtocol.encode(.hello(version: UprobeHolderProtocol.version))) else {
                close(fd)
                continue
            }
            switch receive(fd, &frames) {
            case .success(.hello(let version, let pid)) where version == UprobeHolderProtocol.version:
                setReceiveTimeout(fd, seconds: 120)
                return UprobeHolderClient(connection: fd, holderPID: pid)
            case .failure(let error) where error.reason == "it closed the connection":
                close(fd)
                continue
            case .success(let reply):
                close(fd)
                refuse("\(location.directory)/\(location.name) did not answer as a holder of protocol \(UprobeHolderProtocol.version) (\(reply))")
                return nil
            case .failure(let error):
                close(fd)
                refuse("\(location.directory)/\(location.name) did not answer as a holder of protocol \(UprobeHolderProtocol.version): \(error.reason)")
                return nil
            }
        }
        return nil
    }

    private static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Starts a holder on `name` in `directory` unless another launchprof just did, and
    /// connects. One starter at a time (a lock on the directory itself, so nothing is left
    /// beside the socket): a socket file whose holder died is removed and bound afresh.
    private static func start(in directory: PrivateDirectory, name: String, tracefs: String) -> Result<Int32, UnixSocket.Failure> {
        guard let executable = holderExecutableFound() else { return .failure(.init(errno: ENOENT)) }
        let lock = open(directory.entry("."), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { return .failure(.init(errno: errno)) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        let socketPath = directory.entry(name)
        let again = UnixSocket.connect(socketPath)
        if case .success = again { return again }
        UprobeSupport.awaitEarlierReleases()
        unlink(socketPath)
        let listener = UnixSocket.listen(socketPath)
        guard case .success(let fd) = listener else { return listener }
        defer { close(fd) }
        let started = spawn(
            executable, listener: fd, directory: directory.descriptor,
            arguments: ["--socket", name, "--tracefs", tracefs, "--linger-ms", String(lingerMs())])
        guard started == 0 else { return .failure(.init(errno: started)) }
        return UnixSocket.connect(socketPath)
    }

    /// Starts `executable` as the holder with the listener as descriptor 3 and its directory as
    /// 4, nothing else of this process's (no standard streams: a pipe reader of
    /// `launchprof run | jq` would wait for them), an empty environment; waits for its first
    /// process, which leaves the holder running detached.
    private static func spawn(_ executable: String, listener: Int32, directory: Int32, arguments: [String]) -> Int32 {
        // Above the targets first, so one dup2 cannot overwrite the other's source.
        let listenerCopy = fcntl(listener, F_DUPFD_CLOEXEC, 10)
        let directoryCopy = fcntl(directory, F_DUPFD_CLOEXEC, 10)
        defer {
            close(listenerCopy)
            close(directoryCopy)
        }
        guard listenerCopy >= 0, directoryCopy >= 0 else { return errno }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
        posix_spawn_file_actions_adddup2(&actions, listenerCopy, 3)
        posix_spawn_file_actions_adddup2(&actions, directoryCopy, 4)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([UprobeHolder.processName] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var environment: [UnsafeMutablePointer<CChar>?] = [nil]
        var pid: pid_t = 0
        let error = posix_spawn(&pid, executable, &actions, &attributes, argv, &environment)
        guard error == 0 else { return error }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return 0
    }

    /// The holder's executable (see `holderExecutable`), nil when there is none.
    private static func holderExecutableFound() -> String? {
        if let registered = holderExecutable.withLock({ $0 }) { return registered }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let own = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = own.lastIndex(of: "/") else { return nil }
        let sibling = String(own[..<slash]) + "/launchprof"
        return access(sibling, X_OK) == 0 ? sibling : nil
    }

    /// `LAUNCHPROF_UPROBE_LINGER` seconds (default 60; 0 releases as soon as the last launchprof
    /// leaves), in ms.
    private static func lingerMs() -> Int {
        if let text = getenv("LAUNCHPROF_UPROBE_LINGER").map({ String(cString: $0) }), let seconds = Double(text),
            seconds >= 0, seconds <= 86_400
        {
            return Int(seconds * 1000)
        }
        return 60_000
    }
}
