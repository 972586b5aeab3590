import CLaunchprof
import LaunchprofELF
import LaunchprofSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The uprobe holder: a process of its own (`lp-uprobe-hold`, the launchprof executable started
/// by `UprobeHolderClient`) that keeps tracefs uprobe events registered across launchprof
/// processes, so no invocation pays for registering or releasing a probe, and hands each
/// launchprof the hits of the processes it watches.
///
/// Why a holder, measured on a 2-vCPU AMD VM (kernel 6.18): a uprobe made from the `uprobe` PMU
/// registers its own probe when opened (8–30 ms for the first of a burst) and, when closed,
/// releases it under the kernel's global `event_mutex` while waiting for RCU grace periods
/// (~100 ms per probe) — every `launchprof run` paid both, and the next one's opens queued behind
/// the release. A tracefs uprobe event is one probe shared by every perf event opened on it: only
/// the first open registers it, only the last close releases it.
///
/// What it holds, and for how long:
/// - a probe of the loader's or libc's (`lingers`), which every process on the machine maps
///   anyway, until the holder ends: `lingerNs` after its last client left;
/// - any other probe (the program's own files) until no client has held it for `lingerNs`;
/// - each probe's perf events, one per CPU (every possible CPU of the host), sampling into one
///   ring per CPU (a dummy event's, so releasing a probe never pulls a ring away);
/// - the hits of the processes clients watch (`watch`, at their spawn), apart from everyone
///   else's, until drained; others' hits only briefly (`recent`), for a watch that arrives after
///   its process's first hits;
/// - runtime probes (`holdRuntime`: a dlopen's steps, a toolkit's calls, Python's imports) the
///   same way, their hits sampled with the values they fetch (PERF_SAMPLE_RAW, cut at
///   `maxRuntimePayloadBytes`) and kept apart per watched process.
/// It removes the events of holders that died (left in tracefs: unused ones are deleted at its
/// start), runs in `/` with a command line of its own, and talks only to its own user
/// (SO_PEERCRED) over a socket in that user's private directory (`PrivateDirectory`).
///
/// Three threads: requests (this type's `serve`), the ring reader (woken when a ring is half
/// full), and short-lived releasers (a release waits grace periods; nothing else waits for it).
public final class UprobeHolder: @unchecked Sendable {
    /// The process's name, and the first argument it is started with.
    public static let processName = "lp-uprobe-hold"

    /// Runs the holder when this process was started as one (never returns then); otherwise
    /// records that this executable can serve as the holder. launchprof's `main` calls it first.
    public static func serveIfStartedAsHolder() {
        let arguments = CommandLine.arguments
        guard arguments.first == processName else {
            UprobeHolderClient.holderExecutable.withLock { $0 = "/proc/self/exe" }
            return
        }
        var linger: UInt64 = 60_000_000_000
        var tracefs = "/sys/kernel/tracing"
        var socket = UprobeHolderClient.standardSocketName
        var index = 1
        while index + 1 < arguments.count {
            switch arguments[index] {
            case "--linger-ms": linger = (UInt64(arguments[index + 1]) ?? 60_000) * 1_000_000
            case "--tracefs": tracefs = arguments[index + 1]
            case "--socket": socket = arguments[index + 1]
            default: break
            }
            index += 2
        }
        // Detached: not a child of the launchprof that started it (which reaps this first
        // process at once), in a session of its own, so a terminal's Ctrl-C never reaches it.
        if fork() != 0 { _exit(0) }
        setsid()
        _ = chdir("/")
        umask(0o077)
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 0)
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        signal(SIGPIPE, SIG_IGN)
        lp_set_thread_name(processName)
        let holder = UprobeHolder(listener: 3, directory: 4, socketName: socket, tracefs: tracefs, lingerNs: linger)
        holder.serve()
        exit(0)
    }

    // MARK: State

    private struct Event {
        var name: String
        var tracepoint: UInt64
        /// A runtime probe's: sampled with its payload, and where its values lie in it.
        var payloadFields: [UprobeHolderProtocol.PayloadField]?
        var lingers: Bool
        var descriptors: [Int32]
        var sampleIDs: [UInt64]
        /// The clients that hold it (their connection descriptors).
        var clients: Set<Int32>
        /// Since when no client holds it (CLOCK_MONOTONIC ns).
        var unusedSinceNs: UInt64?
    }

    private struct Client {
        var frames = UprobeHolderProtocol.FrameReader()
        var output: [UInt8] = []
        var greeted = false
        var events: Set<String> = []
        var watched: Set<Int32> = []
        /// When each of its launches in flight began (CLOCK_MONOTONIC ns), oldest first.
        var launches: [UInt64] = []
    }

    private struct Watched {
        var sinceNs: UInt64
        var client: Int32
        var hits: [UprobeHolderProtocol.ProcessHits.Hit] = []
        /// Its runtime probes' hits: never filtered as repeats (`call_init` fires for
        /// consecutive objects within microseconds, and each one is a span of its own).
        var runtime: [UprobeHolderProtocol.ProcessHits.RuntimeHit] = []
        var lost: UInt64 = 0
        /// When the hits counted in `lost` by a full ring were dropped (see `chargeLosses`).
        var losses: [UprobeHolderProtocol.ProcessHits.LossWindow] = []
        /// The process's latest boundary hit, kept or not (see `isRepeat`).
        var lastHit: UprobeHolderProtocol.ProcessHits.Hit?

        /// Whether `hit` repeats the process's previous one: the same probe within `repeatNs`,
        /// no other probe between. A process hitting one probe in a loop (`main: jmp main`, a
        /// spin on a probed function, ~2 µs a hit) adds nothing a launch's boundaries need —
        /// the first hit counts — and would otherwise fill its `maxHitsPerProcess` in ~0.1 s.
        /// A boundary hit again for real (the loader's in the next image of an exec chain)
        /// comes an exec and a mapping later (≥ 100 µs). The rings are read one CPU after
        /// another, so a hit read after a later one is never a repeat.
        mutating func isRepeat(_ hit: UprobeHolderProtocol.ProcessHits.Hit) -> Bool {
            defer { lastHit = hit }
            guard let last = lastHit, last.tracepoint == hit.tracepoint, hit.timeNs >= last.timeNs else { return false }
            return hit.timeNs - last.timeNs < UprobeHolder.repeatNs
        }
    }

    /// A recent hit of a process nobody watched (yet); a runtime probe's with its payload.
    private struct RecentHit {
        var pid: Int32
        var hit: UprobeHolderProtocol.ProcessHits.Hit
        var runtime: UprobeHolderProtocol.ProcessHits.RuntimeHit?
    }

    /// What a claim of recent hits gives a process.
    private struct Claimed {
        var hits: [UprobeHolderProtocol.ProcessHits.Hit] = []
        var runtime: [UprobeHolderProtocol.ProcessHits.RuntimeHit] = []
    }

    /// What the ring reader and the request thread share.
    private struct Hits {
        var tracepointBySampleID: [UInt64: UInt64] = [:]
        var watched: [Int32: Watched] = [:]
        var recent: [RecentHit] = []
        /// Hits ever appended to `recent`: the n-th is at n % recentCapacity.
        var recentAppended = 0
        /// Where each ring read began in `recent` and when (CLOCK_MONOTONIC): a claim scans only
        /// what was read since its process began, not the whole buffer (a debug build's full
        /// scan cost ~0.5 ms a launch, on the CPUs the launches run on).
        var readMarks: [(appended: Int, timeNs: UInt64)] = []
        /// The newest time among recent hits overwritten before anyone claimed them.
        var overwrittenNewestNs: UInt64 = 0
        /// Hits the kernel dropped while nobody was watched: no session's.
        var lostUnwatched: UInt64 = 0
        /// The latest losses (when, how many hits), for a watch that arrives after they were read.
        var recentLosses: [UprobeHolderProtocol.ProcessHits.LossWindow] = []
        var buffer: [lp_perf_sample] = []
        /// Each ring's reading state (same order as `rings`): its repeat filter and loss windows.
        var readings: [lp_ring_reading] = []
        /// Each read sample's payload (`maxRuntimePayloadBytes` apart) and its length.
        var payloads: [UInt8] = []
        var payloadLengths: [UInt32] = []
    }

    private struct Ring {
        var cpu: Int32
        var fd: Int32
        var base: UnsafeMutableRawPointer
        var length: Int
    }

    /// Samples read from a ring at a time.
    static let readBatch = 4096
    /// Hits of unwatched processes kept for a late watch: a watch is sent at the spawn, before
    /// the child runs, so only the first milliseconds of a launch are ever claimed from here.
    static let recentCapacity = 1 << 15
    /// See `Watched.isRepeat`.
    static let repeatNs: UInt64 = 50_000
    /// Processes watched at once (all clients).
    static let maxWatched = 4096
    /// Probes held at once.
    static let maxEvents = 4096
    /// A client whose unread replies exceed this is disconnected.
    static let maxClientOutput = 64 << 20
    /// A launch in flight defers releases for this long at most: one whose client never says
    /// it ended (a hung program without a timeout, a client stuck while connected) must not pin
    /// probes for ever. A launch lasts what its timeout allows, 10 s by default.
    static let maxLaunchNs: UInt64 = 60_000_000_000
    /// Launches in flight one client may have (a session launches on one thread at a time;
    /// several sessions in one process share a connection); beyond it the oldest is dropped.
    static let maxLaunchesPerClient = 64

    private let listener: Int32
    private let directory: Int32
    /// The socket's name in `directory`.
    private let socketName: String
    private let tracefs: String
    private let lingerNs: UInt64
    private let rings: [Ring]
    private let hits = Mutex(Hits())
    private var events: [String: Event] = [:]
    private var clients: [Int32: Client] = [:]
    private var calibration: UprobeHolderProtocol.Calibration?
    private var idleSinceNs: UInt64
    /// Whether a client has connected yet: until one has, the holder waits at least
    /// `firstClientNs` for its starter, whatever the linger (a linger of 0 ended it before the
    /// launchprof that started it could connect).
    private var served = false
    static let firstClientNs: UInt64 = 10_000_000_000
    private let stopping = Atomic<Bool>(false)
    private var releasers: [DedicatedThread<Void>] = []
    /// Releases under way. Releasing a uprobe walks every process mapping the file under its
    /// memory-map lock and waits grace periods, while forks and execs on the machine wait
    /// behind it (a measured launch stalled 0.2–0.85 s in vfork, its waker `lp-uprobe-free`;
    /// ~10 ms after a prewarm resume). So no release starts while a client has a launch in
    /// flight (`launchBegins` … `launchEnded`), and a launch begins — like a new client's
    /// greeting — only once the releases under way are over.
    private let releasesInFlight = Atomic<Int>(0)
    /// A pipe a releaser writes to as it ends (`.write`), so the request loop, polling its
    /// `.read`, answers at once what waited for it.
    private let releaseEnded: (read: Int32, write: Int32)
    /// Clients whose greeting waits for the releases under way.
    private var greetingsDue: [Int32] = []
    /// Clients whose `launchMayBegin` waits for the releases under way.
    private var launchesDue: [Int32] = []

    private init(listener: Int32, directory: Int32, socketName: String, tracefs: String, lingerNs: UInt64) {
        self.listener = listener
        self.directory = directory
        self.socketName = socketName
        self.tracefs = tracefs
        self.lingerNs = lingerNs
        idleSinceNs = Self.nowNs()
        // Nothing of the starter's but these two: it may have had descriptors open without
        // close-on-exec (a test runner's, a shell's).
        for name in DirectoryListing.names("/proc/self/fd") ?? [] {
            if let fd = Int32(name), fd > 4 { close(fd) }
        }
        var ends: [Int32] = [-1, -1]
        _ = lp_pipe(&ends, true)
        releaseEnded = (ends[0], ends[1])
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        rings = Self.openRings()
        hits.withLock { state in
            state.recent.reserveCapacity(Self.recentCapacity)
            state.buffer = [lp_perf_sample](repeating: lp_perf_sample(), count: Self.readBatch)
            state.payloads = [UInt8](repeating: 0, count: Self.readBatch * UprobeHolderProtocol.maxRuntimePayloadBytes)
            state.payloadLengths = [UInt32](repeating: 0, count: Self.readBatch)
            var reading = lp_ring_reading()
            reading.repeat_ns = Self.repeatNs
            state.readings = [lp_ring_reading](repeating: reading, count: rings.count)
        }
        removeStaleEvents()
    }

    // MARK: Rings

    /// The CPUs the kernel may ever run a task on (/sys/devices/system/cpu/possible: "0-255",
    /// "0,2-5"), else the configured count.
    static func possibleCPUs() -> [Int32] {
        if let text = SmallFile.read("/sys/devices/system/cpu/possible") {
            var cpus: [Int32] = []
            for range in text.split(whereSeparator: { $0 == "," || $0 == "\n" }) {
                let bounds = range.split(separator: "-").compactMap { Int32($0) }
                guard let first = bounds.first, let last = bounds.last, first <= last, last < 1 << 16 else { continue }
                cpus += Array(first...last)
            }
            if !cpus.isEmpty { return cpus }
        }
        return Array(0..<max(Int32(sysconf(Int32(_SC_NPROCESSORS_CONF))), 1))
    }

    /// Data pages per CPU ring: 512 (2 MiB, ~50,000 hits: ~0.1 s of a process hitting a probe
    /// in a loop, time for a reader a loaded machine schedules late) on a small host, fewer on
    /// a large one, at most ~8 MiB of rings in all (the reader wakes at half full).
    static func ringPages(cpus: Int) -> Int32 {
        var pages: Int32 = 512
        while pages > 8, Int(pages) * cpus * 4096 > 8 << 20 { pages /= 2 }
        return pages
    }

    private static func openRings() -> [Ring] {
        let cpus = possibleCPUs()
        let pages = ringPages(cpus: cpus.count)
        var rings: [Ring] = []
        for cpu in cpus {
            var fd: Int32 = -1
            var base: UnsafeMutableRawPointer?
            var length = 0
            // ENODEV: an offline CPU, which runs nothing. EPERM/ENOMEM: over the locked-memory
            // limit (without CAP_IPC_LOCK): smaller rings.
            var opened = lp_perf_ring_open(cpu, pages, &fd, &base, &length)
            var smaller = pages
            while opened == EPERM || opened == ENOMEM, smaller > 8 {
                smaller /= 2
                opened = lp_perf_ring_open(cpu, smaller, &fd, &base, &length)
            }
            guard opened == 0, let base else { continue }
            rings.append(Ring(cpu: cpu, fd: fd, base: base, length: length))
        }
        return rings
    }

    /// Reads every ring: a watched process's hits go to it, others' to `recent`. Hits the kernel
    /// dropped (a ring full) count against every process watched while they were dropped: the
    /// ring's loss window, from its previous record to the loss's end, tells when — a process
    /// watched from after it lost none there.
    private func readRings(_ state: inout Hits) {
        if state.readMarks.count >= 1024 { state.readMarks.removeFirst(512) }
        state.readMarks.append((state.recentAppended, Self.nowNs()))
        for (number, ring) in rings.enumerated() {
            var count: Int32 = 0
            repeat {
                var lost: UInt64 = 0
                let stride = UprobeHolderProtocol.maxRuntimePayloadBytes
                state.readings[number].windows = 0
                _ = state.payloads.withUnsafeMutableBufferPointer { payloads in
                    state.payloadLengths.withUnsafeMutableBufferPointer { lengths in
                        lp_perf_ring_read_raw(
                            ring.base, ring.length, &state.buffer, Int32(state.buffer.count), &count, &lost,
                            payloads.baseAddress, stride, lengths.baseAddress, &state.readings[number])
                    }
                }
                if lost > 0 { Self.chargeLosses(state.readings[number], lost: lost, &state) }
                for (index, sample) in state.buffer[..<Int(count)].enumerated() {
                    guard let tracepoint = state.tracepointBySampleID[sample.id] else { continue }
                    let pid = Int32(bitPattern: sample.pid)
                    let hit = UprobeHolderProtocol.ProcessHits.Hit(tracepoint: tracepoint, timeNs: sample.time_ns)
                    // A runtime probe's sample carries its payload; a boundary probe's has none.
                    let length = Int(state.payloadLengths[index])
                    let runtime = length == 0 ? nil : UprobeHolderProtocol.ProcessHits.RuntimeHit(
                        tracepoint: tracepoint, thread: Int32(bitPattern: sample.tid), timeNs: sample.time_ns,
                        payload: Array(state.payloads[(index * stride)..<(index * stride + length)]))
                    if state.watched[pid] != nil {
                        if let runtime {
                            if state.watched[pid]!.runtime.count < UprobeHolderProtocol.maxRuntimeHitsPerProcess {
                                state.watched[pid]!.runtime.append(runtime)
                            } else {
                                state.watched[pid]!.lost &+= 1
                            }
                            continue
                        }
                        if state.watched[pid]!.isRepeat(hit) { continue }
                        if state.watched[pid]!.hits.count < UprobeHolderProtocol.maxHitsPerProcess {
                            state.watched[pid]!.hits.append(hit)
                        } else {
                            // Past its bound: dropped here, at a time known to the nanosecond.
                            state.watched[pid]!.lost &+= 1
                            state.watched[pid]!.losses = Self.adding(
                                .init(beginNs: hit.timeNs, endNs: hit.timeNs, count: 1), to: state.watched[pid]!.losses)
                        }
                    } else {
                        let recent = RecentHit(pid: pid, hit: hit, runtime: runtime)
                        if state.recent.count < Self.recentCapacity {
                            state.recent.append(recent)
                        } else {
                            let index = state.recentAppended % Self.recentCapacity
                            let old = state.recent[index]
                            if old.pid != 0 { state.overwrittenNewestNs = max(state.overwrittenNewestNs, old.hit.timeNs) }
                            state.recent[index] = recent
                        }
                        state.recentAppended += 1
                    }
                }
            } while count == Int32(state.buffer.count)
        }
    }

    /// Charges the losses one read found to the processes watched while they happened, each
    /// with its window (the client reports no span a dropped hit could have ended).
    private static func chargeLosses(_ reading: lp_ring_reading, lost: UInt64, _ state: inout Hits) {
        let windows = withUnsafeBytes(of: reading.loss_begin_ns) { begins in
            withUnsafeBytes(of: reading.loss_end_ns) { ends in
                withUnsafeBytes(of: reading.loss_count) { counts in
                    (0..<Int(reading.windows)).map { index -> UprobeHolderProtocol.ProcessHits.LossWindow in
                        let end = ends.load(fromByteOffset: index * 8, as: UInt64.self)
                        return .init(
                            beginNs: min(begins.load(fromByteOffset: index * 8, as: UInt64.self), end), endNs: end,
                            count: counts.load(fromByteOffset: index * 8, as: UInt64.self))
                    }
                }
            }
        }
        // A record without its time (an older kernel's): every process watched now, its window
        // all of its watch so far.
        let untimed = lost &- min(lost, windows.reduce(0) { $0 &+ $1.count })
        let now = nowNs()
        var charged = false
        for pid in state.watched.keys {
            let since = state.watched[pid]!.sinceNs
            var overlapping = windows.filter { $0.endNs >= since }
            if untimed > 0 { overlapping.append(.init(beginNs: since, endNs: max(since, now), count: untimed)) }
            guard !overlapping.isEmpty else { continue }
            for window in overlapping {
                state.watched[pid]!.lost &+= window.count
                state.watched[pid]!.losses = Self.adding(window, to: state.watched[pid]!.losses)
            }
            charged = true
        }
        if !charged { state.lostUnwatched &+= lost }
        state.recentLosses += windows
        if state.recentLosses.count > 256 { state.recentLosses.removeFirst(state.recentLosses.count - 256) }
    }

    private static func adding(
        _ window: UprobeHolderProtocol.ProcessHits.LossWindow, to windows: [UprobeHolderProtocol.ProcessHits.LossWindow]
    ) -> [UprobeHolderProtocol.ProcessHits.LossWindow] {
        UprobeHolderProtocol.ProcessHits.LossWindow.appending(window, to: windows, limit: UprobeHolderProtocol.maxLossWindowsPerProcess)
    }

    /// Charges a process watched (or drained) from `sinceNs` with what it may have lost before
    /// its watch arrived: hits of it among the recent ones overwritten (at least one, from its
    /// start to the newest overwritten), and the latest ring losses that ended after its start.
    private static func chargeEarlierLosses(_ watched: inout Watched, sinceNs: UInt64, _ state: Hits) {
        if state.overwrittenNewestNs >= sinceNs {
            watched.lost &+= 1
            watched.losses = adding(.init(beginNs: sinceNs, endNs: state.overwrittenNewestNs, count: 1), to: watched.losses)
        }
        for window in state.recentLosses where window.endNs >= sinceNs {
            watched.lost &+= window.count
            watched.losses = adding(window, to: watched.losses)
        }
    }

    /// `pid`'s hits from `sinceNs` on among the recent ones, taken out of them.
    private static func claimRecent(_ pid: Int32, sinceNs: UInt64, _ state: inout Hits) -> Claimed {
        var claimed = Claimed()
        let oldest = max(0, state.recentAppended - Self.recentCapacity)
        // A hit made from `sinceNs` on was appended by the last read that began before then, or
        // by a later one; with no such read remembered, everything kept is scanned.
        var first = oldest
        if let mark = state.readMarks.last(where: { $0.timeNs < sinceNs }) { first = max(mark.appended, oldest) }
        for appended in first..<state.recentAppended {
            let index = appended % Self.recentCapacity
            guard state.recent[index].pid == pid, state.recent[index].hit.timeNs >= sinceNs else { continue }
            if let runtime = state.recent[index].runtime {
                claimed.runtime.append(runtime)
            } else {
                claimed.hits.append(state.recent[index].hit)
            }
            state.recent[index].pid = 0
            state.recent[index].runtime = nil
        }
        return claimed
    }

    private func readerLoop() {
        lp_set_thread_name("lp-uprobe-read")
        var polled = rings.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        while !stopping.load(ordering: .relaxed) {
            // Woken by a ring half full; at least every 100 ms, so the lost counts stay current.
            _ = poll(&polled, nfds_t(polled.count), 100)
            hits.withLock { readRings(&$0) }
        }
    }

    // MARK: Events

    private var eventsDirectory: String { tracefs + "/events/launchprof" }

    /// Deletes the launchprof events no one uses: those of holders that died (a holder deletes
    /// its own when it ends). An event in use by a live holder (another user's, another
    /// version's) is refused by the kernel (EBUSY) and stays.
    private func removeStaleEvents() {
        guard let names = DirectoryListing.names(eventsDirectory) else { return }
        deleteEvents(names.filter { $0 != "enable" && $0 != "filter" })
    }

    private func deleteEvents(_ names: [String]) {
        let fd = Glibc.open(tracefs + "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        for name in names {
            let removal = "-:launchprof/\(name)\n"
            _ = removal.withCString { write(fd, $0, strlen($0)) }
        }
    }

    /// A tracefs event name (letters, digits, `_`, under 64 characters): a hash of the file's
    /// path, device and inode (the kernel resolves an event's path to an inode once: a file
    /// rebuilt in place needs an event of its own), and the offset; a holder-only probe has its
    /// own event, so it is never installed system-wide. A runtime probe's (`lpe_`, a return
    /// probe's `lpr_`) hashes its whole definition in place of the path.
    static func eventName(
        path: String, inode: UInt64, device: UInt64, offset: UInt64, scope: UprobeHolderProtocol.Scope, prefix: String = "lp"
    ) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        for byte in path.utf8 { mix(byte) }
        for value in [inode, device] {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return "\(prefix)\(scope == .systemWide ? "" : "self")_\(String(hash, radix: 16))_\(String(offset, radix: 16))"
    }

    /// The event's tracepoint id, defining it first (by `definition`, one `uprobe_events` line)
    /// when it is not there.
    private func ensureEvent(name: String, definition: String) -> UInt64? {
        let idPath = "\(eventsDirectory)/\(name)/id"
        if let id = SmallFile.read(idPath).flatMap({ UInt64($0.filter(\.isNumber)) }) { return id }
        let fd = Glibc.open(tracefs + "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        _ = definition.withCString { write(fd, $0, strlen($0)) }  // EEXIST: another holder made it
        close(fd)
        return SmallFile.read(idPath).flatMap { UInt64($0.filter(\.isNumber)) }
    }

    /// Holds the probe for `client`: its tracepoint id, or an errno.
    private func hold(
        path: String, offset: UInt64, scope: UprobeHolderProtocol.Scope, lingers: Bool, client: Int32
    ) -> Result<UInt64, UnixSocket.Failure> {
        holdEvent(path: path, scope: scope, lingers: lingers, fetches: nil, client: client) { status in
            Self.eventName(path: path, inode: UInt64(status.st_ino), device: UInt64(status.st_dev), offset: offset, scope: scope)
        } definition: { name in
            "p:launchprof/\(name) \(path):0x\(String(offset, radix: 16))\n"
        }.map(\.tracepoint)
    }

    /// Holds a runtime probe for `client`, system-wide, sampled with its payload: its tracepoint
    /// id and where its fetched values lie in the payload, or an errno. The definition is made
    /// here from the request's typed fields (`RuntimeDefinition.tracefsDefinition`).
    private func holdRuntime(
        _ definition: UprobeHolderProtocol.RuntimeDefinition, client: Int32
    ) -> Result<(tracepoint: UInt64, fields: [UprobeHolderProtocol.PayloadField]), UnixSocket.Failure> {
        holdEvent(path: definition.path, scope: .systemWide, lingers: definition.lingers, fetches: definition.fetch.count, client: client) { status in
            // The name tells apart what a definition does at one place: entry or return, the
            // counter, the values fetched.
            Self.eventName(
                path: definition.tracefsDefinition(name: ""), inode: UInt64(status.st_ino), device: UInt64(status.st_dev),
                offset: definition.offset, scope: .systemWide, prefix: definition.isReturn ? "lpr" : "lpe")
        } definition: { name in
            definition.tracefsDefinition(name: name)
        }.map { ($0.tracepoint, $0.fields ?? []) }
    }

    /// Holds the event `name` makes for the file at `path` (defined by `definition` when new).
    /// `fetches`: a runtime probe's count of fetched values — its events sample the payload, and
    /// the reply says where each value lies in it.
    private func holdEvent(
        path: String, scope: UprobeHolderProtocol.Scope, lingers: Bool, fetches: Int?, client: Int32,
        name makeName: (stat) -> String, definition: (String) -> String
    ) -> Result<(tracepoint: UInt64, fields: [UprobeHolderProtocol.PayloadField]?), UnixSocket.Failure> {
        var status = stat()
        guard stat(path, &status) == 0 else { return .failure(.init(errno: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(.init(errno: EINVAL)) }
        let name = makeName(status)
        if events[name] != nil {
            events[name]!.clients.insert(client)
            events[name]!.unusedSinceNs = nil
            // A probe of the loader or libc lingers whoever asked for it first.
            events[name]!.lingers = events[name]!.lingers || lingers
            clients[client]?.events.insert(name)
            return .success((events[name]!.tracepoint, events[name]!.payloadFields))
        }
        guard events.count < Self.maxEvents else { return .failure(.init(errno: EMFILE)) }
        var failure: Int32 = ENOENT
        // Another holder may delete the event between its definition and our open: redo once.
        for _ in 0..<2 {
            guard let tracepoint = ensureEvent(name: name, definition: definition(name)) else { return .failure(.init(errno: errno == 0 ? ENOENT : errno)) }
            var fields: [UprobeHolderProtocol.PayloadField]?
            if let fetches {
                guard let found = payloadFields(of: name, count: fetches) else { return .failure(.init(errno: EINVAL)) }
                fields = found
            }
            switch open(tracepoint: tracepoint, scope: scope, payload: fetches != nil) {
            case .success(let opened):
                events[name] = Event(
                    name: name, tracepoint: tracepoint, payloadFields: fields, lingers: lingers, descriptors: opened.descriptors,
                    sampleIDs: opened.sampleIDs, clients: [client])
                clients[client]?.events.insert(name)
                hits.withLock { state in
                    for id in opened.sampleIDs { state.tracepointBySampleID[id] = tracepoint }
                }
                return .success((tracepoint, fields))
            case .failure(let error):
                failure = error.errno
                guard failure == ENOENT || failure == EINVAL else { return .failure(error) }
            }
        }
        return .failure(.init(errno: failure))
    }

    /// Where the event's fetched values `a0`… lie in its payload, from its `format` file; nil
    /// when one is missing or lies past what a hit keeps (`maxRuntimePayloadBytes`).
    private func payloadFields(of name: String, count: Int) -> [UprobeHolderProtocol.PayloadField]? {
        guard let format = SmallFile.read("\(eventsDirectory)/\(name)/format"), let layout = TraceEventLayout(format: format) else {
            return nil
        }
        var fields: [UprobeHolderProtocol.PayloadField] = []
        for index in 0..<count {
            guard let field = layout.fields.first(where: { $0.name == "a\(index)" }), field.offset >= 0, field.size > 0,
                field.size <= 8, field.offset + field.size <= UprobeHolderProtocol.maxRuntimePayloadBytes
            else { return nil }
            fields.append(.init(offset: UInt16(field.offset), size: UInt16(field.size), isDataLocation: field.isDataLocation))
        }
        return fields
    }

    /// One perf event per CPU ring (system-wide), or one counting event on the holder itself.
    /// `payload`: each sample carries the event's fetched values (PERF_SAMPLE_RAW).
    private func open(tracepoint: UInt64, scope: UprobeHolderProtocol.Scope, payload: Bool) -> Result<(descriptors: [Int32], sampleIDs: [UInt64]), UnixSocket.Failure> {
        if scope == .holderOnly {
            var fd: Int32 = -1
            let error = lp_tracepoint_hold_open(tracepoint, &fd)
            return error == 0 ? .success(([fd], [])) : .failure(.init(errno: error))
        }
        var descriptors: [Int32] = []
        var ids: [UInt64] = []
        for ring in rings {
            var fd: Int32 = -1
            var id: UInt64 = 0
            let error = lp_tracepoint_probe_open_raw(-1, ring.cpu, tracepoint, ring.fd, payload ? 1 : 0, &fd, &id)
            if error == ENODEV { continue }  // went offline
            guard error == 0 else {
                for fd in descriptors { close(fd) }
                return .failure(.init(errno: error))
            }
            descriptors.append(fd)
            ids.append(id)
        }
        return descriptors.isEmpty ? .failure(.init(errno: ENODEV)) : .success((descriptors, ids))
    }

    /// Closes the events' descriptors and deletes them, on a thread of its own: each release
    /// waits for RCU grace periods (~0.1 s a probe here), which no client should wait for.
    private func release(_ released: [Event]) {
        guard !released.isEmpty else { return }
        hits.withLock { state in
            for event in released { for id in event.sampleIDs { state.tracepointBySampleID[id] = nil } }
        }
        let tracefs = tracefs
        releasesInFlight.add(1, ordering: .sequentiallyConsistent)
        let thread = DedicatedThread<Void> { [self] in
            defer {
                releasesInFlight.subtract(1, ordering: .sequentiallyConsistent)
                var byte: UInt8 = 1
                _ = write(releaseEnded.write, &byte, 1)
            }
            lp_set_thread_name("lp-uprobe-free")
            for event in released { for fd in event.descriptors { close(fd) } }
            let fd = Glibc.open(tracefs + "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC)
            guard fd >= 0 else { return }
            // EBUSY: another holder (or a new hold of ours) uses it; it stays.
            for event in released {
                let removal = "-:launchprof/\(event.name)\n"
                _ = removal.withCString { write(fd, $0, strlen($0)) }
            }
            close(fd)
        }
        releasers.append(thread)
    }

    /// Releases the probes no client has held for the linger (not the loader's and libc's),
    /// unless a launch is in flight: then they wait for its end.
    private func releaseExpired(now: UInt64) {
        guard !Self.launchInFlight(clients.values.map(\.launches), now: now) else { return }
        let expired = events.values.filter { event in
            guard !event.lingers, let since = event.unusedSinceNs else { return false }
            return now >= since + lingerNs
        }
        for event in expired { events[event.name] = nil }
        release(expired)
    }

    /// Whether any of these launches (each client's begin times) defers releases at `now`:
    /// one that began less than `maxLaunchNs` ago.
    static func launchInFlight(_ launches: [[UInt64]], now: UInt64) -> Bool {
        launches.contains { $0.contains { now < $0 &+ maxLaunchNs } }
    }

    // MARK: Serving

    private func serve() {
        let reader = DedicatedThread<Void> { [self] in readerLoop() }
        while true {
            let now = Self.nowNs()
            releaseExpired(now: now)
            if !greetingsDue.isEmpty || !launchesDue.isEmpty, releasesInFlight.load(ordering: .sequentiallyConsistent) == 0 {
                for fd in greetingsDue where clients[fd] != nil {
                    reply(.hello(version: UprobeHolderProtocol.version, holderPID: getpid()), to: fd)
                    flush(fd)
                }
                for fd in launchesDue where clients[fd] != nil {
                    reply(.launchMayBegin, to: fd)
                    flush(fd)
                }
                greetingsDue = []
                launchesDue = []
            }
            if clients.isEmpty, now >= idleEndNs { break }
            var polled = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: releaseEnded.read, events: Int16(POLLIN), revents: 0),
            ]
            for (fd, client) in clients {
                polled.append(pollfd(fd: fd, events: Int16(POLLIN) | (client.output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0))
            }
            let ready = poll(&polled, nfds_t(polled.count), Self.pollTimeoutMs(now: now, deadlines: deadlines(now: now)))
            if ready < 0, errno != EINTR { break }
            guard ready > 0 else { continue }
            if polled[0].revents & Int16(POLLIN) != 0 { accept() }
            if polled[1].revents & Int16(POLLIN) != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                _ = read(releaseEnded.read, &bytes, bytes.count)
            }
            for entry in polled.dropFirst(2) where entry.revents != 0 {
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(from: entry.fd) }
                if clients[entry.fd] != nil { flush(entry.fd) }
            }
        }
        // Named before the socket goes, so a launchprof that finds no holder also finds this.
        lp_set_thread_name("lp-uprobe-free")
        // The socket file goes before the listener closes: a launchprof that then finds no
        // holder binds a fresh one, never this name after us.
        unlinkat(directory, socketName, 0)
        close(listener)
        stopping.store(true, ordering: .relaxed)
        reader.join()
        release(Array(events.values))
        events = [:]
        for thread in releasers { thread.join() }
    }

    /// When something is due: the holder's own end and each unused probe's release — while a
    /// launch is in flight, the moment it stops deferring releases (its end comes as a message).
    private func deadlines(now: UInt64) -> [UInt64] {
        var due = events.values.compactMap { $0.lingers ? nil : $0.unusedSinceNs.map { $0 + lingerNs } }
        let launches = clients.values.flatMap(\.launches).filter { now < $0 &+ Self.maxLaunchNs }
        if !due.isEmpty, !launches.isEmpty {
            due = [max(due.min()!, launches.map { $0 &+ Self.maxLaunchNs }.max()!)]
        }
        if clients.isEmpty { due.append(idleEndNs) }
        return due
    }

    /// When the holder ends if no client comes.
    private var idleEndNs: UInt64 { idleSinceNs + (served ? lingerNs : max(lingerNs, Self.firstClientNs)) }

    static func pollTimeoutMs(now: UInt64, deadlines: [UInt64]) -> Int32 {
        guard let next = deadlines.min() else { return 1000 }
        return next <= now ? 0 : Int32(min((next - now) / 1_000_000 + 1, 1000))
    }

    private func accept() {
        while true {
            let fd = Glibc.accept(listener, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Only the holder's own user may make it hold anything.
            guard let peer = UnixSocket.peer(fd), peer.uid == geteuid(), clients.count < 1024 else {
                close(fd)
                continue
            }
            clients[fd] = Client()
            served = true
        }
    }

    private func receive(from fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while clients[fd] != nil {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
            guard count > 0 else {
                disconnect(fd)
                return
            }
            clients[fd]!.frames.append(chunk[..<count])
            do throws(UprobeHolderProtocol.Malformed) {
                while let payload = try clients[fd]?.frames.next() {
                    handle(try UprobeHolderProtocol.decodeRequest(payload), from: fd)
                }
            } catch {
                disconnect(fd)
                return
            }
        }
    }

    private func handle(_ request: UprobeHolderProtocol.Request, from fd: Int32) {
        if case .hello = request {} else if clients[fd]?.greeted != true {
            disconnect(fd)
            return
        }
        switch request {
        case .hello(let version):
            guard version == UprobeHolderProtocol.version else {
                disconnect(fd)
                return
            }
            clients[fd]!.greeted = true
            if releasesInFlight.load(ordering: .sequentiallyConsistent) > 0 {
                greetingsDue.append(fd)
            } else {
                reply(.hello(version: UprobeHolderProtocol.version, holderPID: getpid()), to: fd)
            }
        case .hold(let path, let offset, let scope, let lingers):
            switch hold(path: path, offset: offset, scope: scope, lingers: lingers, client: fd) {
            case .success(let tracepoint): reply(.held(tracepoint: tracepoint), to: fd)
            case .failure(let error): reply(.failed(errno: error.errno), to: fd)
            }
        case .holdRuntime(let definition):
            switch holdRuntime(definition, client: fd) {
            case .success(let held): reply(.heldRuntime(tracepoint: held.tracepoint, fields: held.fields), to: fd)
            case .failure(let error): reply(.failed(errno: error.errno), to: fd)
            }
        case .watch(let pid, let since):
            hits.withLock { state in
                guard state.watched[pid] == nil, state.watched.count < Self.maxWatched else { return }
                var watched = Watched(sinceNs: since, client: fd)
                let claimed = Self.claimRecent(pid, sinceNs: since, &state)
                watched.hits = claimed.hits
                watched.runtime = claimed.runtime
                // Hits of it made before this watch arrived may have been overwritten, or lost.
                Self.chargeEarlierLosses(&watched, sinceNs: since, state)
                state.watched[pid] = watched
            }
            clients[fd]?.watched.insert(pid)
        case .drain(let queries):
            let replies = hits.withLock { state in
                // The processes have ended: every hit they made is in the rings now.
                readRings(&state)
                return queries.map { query -> UprobeHolderProtocol.ProcessHits in
                    var found: Watched
                    if let watched = state.watched.removeValue(forKey: query.pid) {
                        found = watched
                    } else {
                        // Never watched: its hits are whichever of the recent ones are left.
                        found = Watched(sinceNs: query.sinceNs, client: fd)
                        Self.chargeEarlierLosses(&found, sinceNs: query.sinceNs, state)
                    }
                    let late = Self.claimRecent(query.pid, sinceNs: query.sinceNs, &state)
                    let hits = (found.hits.filter { $0.timeNs >= query.sinceNs } + late.hits).sorted { $0.timeNs < $1.timeNs }
                    var runtime = (found.runtime.filter { $0.timeNs >= query.sinceNs } + late.runtime).sorted { $0.timeNs < $1.timeNs }
                    // Within the reply's bounds: a process that was never watched claims from
                    // `recent`, which may hold more of it than one reply carries.
                    if runtime.count > UprobeHolderProtocol.maxRuntimeHitsPerProcess {
                        found.lost &+= UInt64(runtime.count - UprobeHolderProtocol.maxRuntimeHitsPerProcess)
                        runtime.removeLast(runtime.count - UprobeHolderProtocol.maxRuntimeHitsPerProcess)
                    }
                    let kept = hits.prefix(UprobeHolderProtocol.maxHitsPerProcess)
                    if let first = hits.dropFirst(kept.count).first, let last = hits.last {
                        found.lost &+= UInt64(hits.count - kept.count)
                        found.losses = Self.adding(
                            .init(beginNs: first.timeNs, endNs: last.timeNs, count: UInt64(hits.count - kept.count)), to: found.losses)
                    }
                    return UprobeHolderProtocol.ProcessHits(
                        pid: query.pid, lost: found.lost, hits: Array(kept), runtime: runtime, losses: found.losses)
                }
            }
            for query in queries { clients[fd]?.watched.remove(query.pid) }
            for hits in replies { reply(.hits(hits), to: fd) }
        case .calibration:
            reply(.calibration(calibration), to: fd)
        case .storeCalibration(let value):
            calibration = value
        case .launchBegins:
            // From now on no release starts (`releaseExpired`); one under way ends first.
            if clients[fd]!.launches.count >= Self.maxLaunchesPerClient { clients[fd]!.launches.removeFirst() }
            clients[fd]!.launches.append(Self.nowNs())
            if releasesInFlight.load(ordering: .sequentiallyConsistent) > 0 {
                launchesDue.append(fd)
            } else {
                reply(.launchMayBegin, to: fd)
            }
        case .launchEnded:
            // Its oldest: which one ended does not matter, only how many remain.
            if !clients[fd]!.launches.isEmpty { clients[fd]!.launches.removeFirst() }
        }
    }

    private func reply(_ reply: UprobeHolderProtocol.Reply, to fd: Int32) {
        clients[fd]?.output += UprobeHolderProtocol.encode(reply)
        if (clients[fd]?.output.count ?? 0) > Self.maxClientOutput { disconnect(fd) }
    }

    /// Sends what a client has pending, as far as its socket takes it now.
    private func flush(_ fd: Int32) {
        guard var output = clients[fd]?.output, !output.isEmpty else { return }
        var sent = 0
        while sent < output.count {
            let count = output.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
            guard count > 0 else {
                disconnect(fd)
                return
            }
            sent += count
        }
        output.removeFirst(sent)
        clients[fd]?.output = output
    }

    private func disconnect(_ fd: Int32) {
        // Its launches in flight end with it.
        guard let client = clients.removeValue(forKey: fd) else { return }
        close(fd)
        greetingsDue.removeAll { $0 == fd }
        launchesDue.removeAll { $0 == fd }
        let now = Self.nowNs()
        for name in client.events {
            events[name]?.clients.remove(fd)
            if events[name]?.clients.isEmpty == true { events[name]?.unusedSinceNs = now }
        }
        hits.withLock { state in
            for pid in client.watched where state.watched[pid]?.client == fd { state.watched[pid] = nil }
        }
        if clients.isEmpty { idleSinceNs = now }
    }

    static func nowNs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
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
}
