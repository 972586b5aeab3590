import CLaunchprof
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps uprobes registered across launchprof processes, so that no invocation pays for
/// registering or releasing one.
///
/// Measured on a 2-vCPU AMD VM (kernel 6.18): a uprobe perf event created from the `uprobe` PMU
/// registers its own probe when opened (8–30 ms for the first of a burst) and, when closed,
/// releases it under the kernel's `event_mutex` while waiting for RCU grace periods (~100 ms per
/// probe) — every `launchprof run` paid both, and the next one's opens queued behind the release
/// (seconds after a session with many libraries). A uprobe defined in tracefs (`uprobe_events`)
/// is one event shared by every perf event opened on it: only the first open registers it and only
/// the last close releases it. The holder (`lp-uprobe-hold`, a detached process) opens the
/// events once, one per CPU, sampling into its own ring buffers, and hands each launchprof the
/// hits of its child (`drain`): a launchprof process opens no perf event of its own (but the
/// holder's first client, to measure a hit's cost in itself), so it never
/// waits on the kernel's global `event_mutex` either, which another process's uprobe release
/// holds for ~0.1 s per probe.
/// It lingers `LAUNCHPROF_UPROBE_LINGER` seconds (default 60) after its last client leaves, then
/// releases the probes — renamed `lp-uprobe-free` while it does — and deletes its events.
///
/// While it lingers its probes stay installed in every process that maps the probed files (the
/// price the CPU-wide events already had while a session ran: ~1.2 µs per hit).
public final class UprobeHolder: Sendable {
    /// How long a release may take before launchprof says it waits for one.
    static let quietWaitNs: UInt64 = 100_000_000

    private let connection: Int32
    private let uprobeEvents: String
    private let eventsDirectory: String
    /// Events this process has had held: name → tracepoint id.
    private let held = Mutex<[String: UInt64]>([:])
    /// Runtime probes' events this process has had held: name → tracepoint id and payload layout.
    private let heldRuntime = Mutex<[String: (UInt64, TraceEventLayout)]>([:])
    /// One request and its reply at a time on the connection (sessions run on several threads).
    private let exchange = Mutex(())
    /// Where a drain's reply lands, used under `exchange`: allocated once and not initialized,
    /// so only the pages a reply fills are ever touched (a fresh zeroed 192 KiB array per drain
    /// cost ~50 page faults).
    nonisolated(unsafe) private let replyBuffer = UnsafeMutablePointer<lp_perf_sample>.allocate(capacity: UprobeHolder.replyCapacity)
    private static let replyCapacity = 8192
    /// Where a payload drain's reply lands, used under `exchange`: allocated once, untouched until
    /// a reply fills it (4,096 hits of up to LP_HOLDER_RAW_BYTES each).
    private struct PayloadBuffers: @unchecked Sendable {
        var samples: UnsafeMutablePointer<lp_perf_sample>
        var payloads: UnsafeMutablePointer<UInt8>
        var lengths: UnsafeMutablePointer<UInt32>
    }
    private static let payloadCapacity = 4096
    private let payloadBuffers = PayloadBuffers(
        samples: .allocate(capacity: UprobeHolder.payloadCapacity),
        payloads: .allocate(capacity: UprobeHolder.payloadCapacity * Int(LP_HOLDER_RAW_BYTES)),
        lengths: .allocate(capacity: UprobeHolder.payloadCapacity))

    private init(connection: Int32, tracefs: String) {
        self.connection = connection
        uprobeEvents = tracefs + "/uprobe_events"
        eventsDirectory = tracefs + "/events/launchprof"
    }

    deinit {
        close(connection)
        replyBuffer.deallocate()
        payloadBuffers.samples.deallocate()
        payloadBuffers.payloads.deallocate()
        payloadBuffers.lengths.deallocate()
    }

    private static let sharedHolder = Mutex<UprobeHolder??>(nil)

    /// The process's connection to the holder, started when none runs; nil where tracefs or the
    /// holder is unavailable (launchprof then uses PMU uprobes, released in the background).
    public static func shared() -> UprobeHolder? {
        sharedHolder.withLock { cached in
            if let cached { return cached }
            let holder = connect()
            cached = .some(holder)
            return holder
        }
    }

    /// One holder per user and protocol version, listening on a socket in a directory only that
    /// user can write (`PrivateDirectory`). `LAUNCHPROF_UPROBE_HOLDER` names another socket: a
    /// name in that directory, or a path (tests use their own). Version 4: the socket is a file in
    /// a private directory, no longer an abstract name anyone could bind first. Version 6: events
    /// held with their payload ("R") and drained with it ("X").
    private static var socketLocation: (directory: String, name: String, standard: Bool) {
        let standard = PrivateDirectory.standardPath
        guard let named = getenv("LAUNCHPROF_UPROBE_HOLDER").map({ String(cString: $0) }), !named.isEmpty else {
            return (standard, "uprobe-holder-6.sock", true)
        }
        guard let slash = named.lastIndex(of: "/") else { return (standard, named, true) }
        let directory = String(named[..<slash])
        return (directory.isEmpty ? "/" : directory, String(named[named.index(after: slash)...]), false)
    }

    /// Whether this process said already why it measures without the holder.
    private static let refusalSaid = Mutex(false)

    private static func refuse(_ reason: String) {
        let first = refusalSaid.withLock { said in
            defer { said = true }
            return !said
        }
        if first { StatusLine.say("not using the uprobe holder: \(reason); measuring without it (PMU uprobes)") }
    }

    private static func connect() -> UprobeHolder? {
        guard let tracefs = tracefsRoot() else { return nil }
        let location = socketLocation
        let directory: PrivateDirectory
        do throws(PrivateDirectory.Untrusted) {
            // The standard directory is made when missing; one that is named must exist already.
            directory = try PrivateDirectory.open(location.directory, create: location.standard)
        } catch {
            refuse("its socket's directory \(error); a holder is trusted only in a directory no other user can write")
            return nil
        }
        let socketPath = directory.entry(location.name)
        var connection = UnixSocket.connect(socketPath)
        if case .failure(let error) = connection, error.errno == ENOENT || error.errno == ECONNREFUSED {
            connection = startHolder(in: directory, name: location.name, tracefs: tracefs)
        }
        guard case .success(let fd) = connection else { return nil }
        // The kernel says who listens: only a holder of this same user is asked anything.
        guard let peer = UnixSocket.peer(fd), peer.uid == geteuid() else {
            let peer = UnixSocket.peer(fd)
            close(fd)
            refuse(
                "\(location.directory)/\(location.name) is served by "
                    + (peer.map { "process \($0.pid) of uid \($0.uid)" } ?? "a process the kernel would not name")
                    + ", not by uid \(geteuid())")
            return nil
        }
        return UprobeHolder(connection: fd, tracefs: tracefs)
    }

    /// Starts a holder on `name` in `directory` unless another launchprof just did, and connects.
    /// One starter at a time (a lock file beside the socket): a socket file whose holder died is
    /// removed and bound afresh.
    private static func startHolder(in directory: PrivateDirectory, name: String, tracefs: String) -> Result<Int32, UnixSocket.Failure> {
        let lock = open(directory.entry(name + ".lock"), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { return .failure(UnixSocket.Failure(errno: errno)) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        let socketPath = directory.entry(name)
        let again = UnixSocket.connect(socketPath)
        if case .success = again { return again }
        UprobeSupport.awaitEarlierReleases()
        unlink(socketPath)
        let listener = UnixSocket.listen(socketPath)
        guard case .success(let fd) = listener else { return listener }
        let started = lp_uprobe_holder_start(fd, directory.descriptor, name, tracefs + "/uprobe_events", lingerMs())
        close(fd)
        guard started == 0 else { return .failure(UnixSocket.Failure(errno: started)) }
        return UnixSocket.connect(socketPath)
    }

    private static func lingerMs() -> Int32 {
        if let text = getenv("LAUNCHPROF_UPROBE_LINGER").map({ String(cString: $0) }), let seconds = Double(text),
            seconds >= 0, seconds <= 86_400
        {
            return Int32(seconds * 1000)
        }
        return 60_000
    }

    /// Where tracefs is mounted; mounted at /sys/kernel/tracing when it is not (root only).
    public static func tracefsRoot() -> String? {
        // Where it almost always is: one access(2) instead of reading every mount.
        let standard = "/sys/kernel/tracing"
        if access(standard + "/uprobe_events", W_OK) == 0 { return standard }
        if let mounts = SmallFile.read("/proc/self/mountinfo") {
            for line in mounts.split(separator: "\n") {
                // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS… - TYPE SOURCE …"
                let fields = line.split(separator: " ")
                guard let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, fields[dash + 1] == "tracefs",
                    fields.count > 4
                else { continue }
                let root = String(fields[4])
                if access(root + "/uprobe_events", W_OK) == 0 { return root }
            }
        }
        guard geteuid() == 0, mount("nodev", standard, "tracefs", 0, nil) == 0 else { return nil }
        return access(standard + "/uprobe_events", W_OK) == 0 ? standard : nil
    }

    /// Has the holder keep the probe at `path`+`offset` registered; its tracepoint id, for
    /// `lp_tracepoint_probe_open`. `systemWide`: in every process mapping the file (the launch
    /// boundaries); otherwise only in the holder (a function launchprof probes in itself).
    public func hold(path: String, offset: UInt64, systemWide: Bool) -> UInt64? {
        guard !path.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) else { return nil }
        // A tracefs event resolves its path to an inode once: a file rebuilt in place is a new
        // inode, which needs an event of its own (else its probes would never fire).
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let name = Self.eventName(
            path: path, inode: UInt64(status.st_ino), device: UInt64(status.st_dev), offset: offset, systemWide: systemWide)
        if let id = held.withLock({ $0[name] }) { return id }
        // An old holder may delete the event between our reading its id and holding it: redo once.
        for _ in 0..<2 {
            guard let id = ensureEvent(name: name, path: path, offset: offset) else { return nil }
            guard let reply = request("\(systemWide ? "H" : "P") \(id) \(name)\n") else { return nil }
            if reply == "0" {
                held.withLock { $0[name] = id }
                return id
            }
        }
        return nil
    }

    /// Has the holder keep the runtime probe `probe` registered system-wide, its hits sampled with
    /// their fetched values: its tracepoint id and the layout of its payload. The definition is
    /// built from the probe's typed fields (`p:`/`r:`, the SDT semaphore as reference counter,
    /// `a0=`, `a1=` … in fetch order); no client text reaches the kernel's parser.
    public func hold(_ probe: RuntimeProbe) -> (tracepoint: UInt64, layout: TraceEventLayout)? {
        guard !probe.path.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "(" || $0 == ")" }) else { return nil }
        var status = stat()
        guard stat(probe.path, &status) == 0 else { return nil }
        var location = "\(probe.path):0x\(String(probe.offset, radix: 16))"
        if let counter = probe.referenceCounter { location += "(0x\(String(counter, radix: 16)))" }
        let arguments = probe.fetch.enumerated().map { " a\($0.offset)=\($0.element.tracefsText)" }.joined()
        // The name tells apart what the definition does: entry or return, counter, arguments.
        let variant = (probe.isReturn ? "r" : "p") + location + arguments
        let name = Self.eventName(
            path: variant, inode: UInt64(status.st_ino), device: UInt64(status.st_dev), offset: probe.offset,
            systemWide: true, prefix: probe.isReturn ? "lpr" : "lpe")
        if let held = heldRuntime.withLock({ $0[name] }) { return held }
        for _ in 0..<2 {
            guard let id = ensureEvent(name: name, definition: "\(probe.isReturn ? "r" : "p"):launchprof/\(name) \(location)\(arguments)\n"),
                let format = SmallFile.read("\(eventsDirectory)/\(name)/format"), let layout = TraceEventLayout(format: format)
            else { return nil }
            guard let reply = request("R \(id) \(name)\n") else { return nil }
            if reply == "0" {
                heldRuntime.withLock { $0[name] = (id, layout) }
                return (id, layout)
            }
        }
        return nil
    }

    /// Every hit with a payload (`hold(_:)`'s events) of each process since its time, as
    /// `drain` gives the others: (tracepoint id, thread, CLOCK_MONOTONIC ns, payload). nil where
    /// the exchange failed.
    func drainPayloads(_ requests: [(pid: Int32, sinceNs: UInt64)]) -> [[(tracepoint: UInt64, thread: Int32, timeNs: UInt64, payload: [UInt8])]]? {
        exchange.withLock { _ in
            guard !requests.isEmpty else { return [] }
            guard lp_uprobe_holder_drain_send(connection, CChar(UInt8(ascii: "X")), requests.map(\.pid), requests.map(\.sinceNs), Int32(requests.count)) == 0
            else { return nil }
            let bytes = Int(LP_HOLDER_RAW_BYTES)
            let buffers = payloadBuffers
            var replies: [[(tracepoint: UInt64, thread: Int32, timeNs: UInt64, payload: [UInt8])]] = []
            for _ in requests {
                var count: Int32 = 0
                var lost: UInt64 = 0
                guard lp_uprobe_holder_drain_raw_receive(
                    connection, buffers.samples, buffers.payloads, buffers.lengths, Int32(Self.payloadCapacity), &count, &lost) == 0
                else { return nil }
                replies.append((0..<Int(count)).map { index in
                    let sample = buffers.samples[index]
                    let payload = Array(UnsafeBufferPointer(
                        start: buffers.payloads + index * bytes, count: Int(min(buffers.lengths[index], UInt32(bytes)))))
                    return (sample.id, Int32(bitPattern: sample.tid), sample.time_ns, payload)
                })
            }
            return replies
        }
    }

    /// Every hit of each process since its time (CLOCK_MONOTONIC) on the events the holder holds
    /// system-wide, oldest first, as (tracepoint id, CLOCK_MONOTONIC ns); and how many hits its
    /// buffers had no room for. All the requests go out before the first reply is read: one
    /// exchange, one wake-up of the holder, for any number of launches. nil where the exchange
    /// failed.
    func drain(_ requests: [(pid: Int32, sinceNs: UInt64)]) -> [(hits: [(tracepoint: UInt64, timeNs: UInt64)], lost: UInt64)]? {
        exchange.withLock { _ in
            guard !requests.isEmpty else { return [] }
            guard lp_uprobe_holder_drain_send(connection, CChar(UInt8(ascii: "D")), requests.map(\.pid), requests.map(\.sinceNs), Int32(requests.count)) == 0
            else { return nil }
            var replies: [(hits: [(tracepoint: UInt64, timeNs: UInt64)], lost: UInt64)] = []
            for _ in requests {
                var count: Int32 = 0
                var lost: UInt64 = 0
                guard lp_uprobe_holder_drain_receive(connection, replyBuffer, Int32(Self.replyCapacity), &count, &lost) == 0
                else { return nil }
                replies.append((UnsafeBufferPointer(start: replyBuffer, count: Int(count)).map { ($0.id, $0.time_ns) }, lost))
            }
            return replies
        }
    }

    /// The hit costs an earlier launchprof measured on this host while this holder ran.
    public var calibration: UprobeCalibration? {
        guard let reply = request("C\n") else { return nil }
        let numbers = reply.split(separator: " ").compactMap { UInt64($0) }
        guard numbers.count == 2 || numbers.count == 3 else { return nil }
        return UprobeCalibration(
            emulatedHitNs: numbers[0], steppedHitNs: numbers[1], ptraceStopNs: numbers.count == 3 ? numbers[2] : nil)
    }

    public func store(_ calibration: UprobeCalibration) {
        _ = request("K \(calibration.emulatedHitNs) \(calibration.steppedHitNs)" + (calibration.ptraceStopNs.map { " \($0)" } ?? "") + "\n")
    }

    private func request(_ line: String) -> String? {
        var reply = [CChar](repeating: 0, count: 128)
        let error = exchange.withLock { _ in lp_uprobe_holder_request(connection, line, &reply, Int32(reply.count)) }
        guard error == 0 else { return nil }
        return String(decoding: reply.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A tracefs event name (letters, digits, `_`, under 64 characters): a hash of the file's
    /// path, device and inode, and the offset; the pid-bound kind has its own event, so its probe
    /// is never installed system-wide.
    static func eventName(
        path: String, inode: UInt64, device: UInt64, offset: UInt64, systemWide: Bool, prefix: String = "lp"
    ) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        for byte in path.utf8 { mix(byte) }
        for value in [inode, device] {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return "\(prefix)\(systemWide ? "" : "self")_\(String(hash, radix: 16))_\(String(offset, radix: 16))"
    }

    private func ensureEvent(name: String, path: String, offset: UInt64) -> UInt64? {
        ensureEvent(name: name, definition: "p:launchprof/\(name) \(path):0x\(String(offset, radix: 16))\n")
    }

    private func ensureEvent(name: String, definition: String) -> UInt64? {
        let idPath = "\(eventsDirectory)/\(name)/id"
        if let id = SmallFile.read(idPath).flatMap({ UInt64($0.filter(\.isNumber)) }) { return id }
        let fd = open(uprobeEvents, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        _ = definition.withCString { write(fd, $0, strlen($0)) }  // EEXIST: another launchprof made it
        close(fd)
        return SmallFile.read(idPath).flatMap { UInt64($0.filter(\.isNumber)) }
    }
}
