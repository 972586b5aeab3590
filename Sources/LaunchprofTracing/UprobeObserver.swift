import CLaunchprof
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Observes launch boundaries with uprobe perf events: the kernel notes the time of each hit in a
/// ring buffer and the process runs on, never stopped and never read.
///
/// Probes are armed once per session, one event per probe and CPU, not per launch: on this kind
/// of host registering a uprobe waits for an RCU grace period (8–28 ms measured) and releasing
/// one ~90 ms, far more than a launch, so per-launch arming would put milliseconds inside every
/// measured span. The price is system-wide: a CPU-wide uprobe is installed in every process that
/// maps the file, so while a session runs any process starting on the machine takes a hit
/// (~1.2 µs when emulated) at the loader's relocation start and at libc's first initializer;
/// only samples of launchprof's own child are kept.
///
/// Where tracefs is available each probe is a tracefs uprobe event that `UprobeHolder` keeps
/// registered and samples across launchprof processes: this process opens no perf event, tells
/// the holder which processes to keep the hits of (`watch`) and reads them from it
/// (`UprobeHolderClient`). Elsewhere each is the uprobe PMU's own, opened here.
///
/// One observer serves the whole launchprof process (`shared`): sessions add their probes and
/// none is removed before the process exits (PMU probes: released by a short-lived process).
/// Releasing them earlier, while another session's ptrace observer runs, could pull an int3 from
/// under a breakpoint word that observer had read (see `ProbePlacement`).
public final class UprobeObserver: Sendable {
    /// One hit of one probe.
    public struct Sample: Sendable, Equatable {
        public var key: UprobeTarget.Key
        public var pid: Int32
        public var timeNs: UInt64
    }

    /// What one drain gives for one process.
    public struct Drained: Sendable {
        /// Its boundary probes' hits, oldest first.
        public var samples: [Sample] = []
        /// Its runtime probes' hits with their fetched values, oldest first.
        public var runtime: [RuntimeProbeHit] = []
        /// Hits the buffers had no room for.
        public var lost: UInt64 = 0
        /// When the holder's buffers dropped them, as far as it knows (`lost` may count more:
        /// this process's own rings record no windows).
        public var losses: [UprobeHolderProtocol.ProcessHits.LossWindow] = []
    }

    /// A runtime probe the holder samples with its payload.
    private struct HeldRuntimeProbe {
        var key: RuntimeProbe.Key
        var layout: TraceEventLayout
        var fetch: [FetchedArgument]
    }

    private struct Ring {
        var fd: Int32
        var base: UnsafeMutableRawPointer
        var length: Int
    }

    private struct State {
        var rings: [Int32: Ring] = [:]
        /// Events on the PMU's own uprobes (no holder): their release waits grace periods.
        var fds: [Int32] = []
        var keyByID: [UInt64: UprobeTarget.Key] = [:]
        /// From when each watched process's hits are wanted (its spawn).
        var watchedSince: [Int32: UInt64] = [:]
        /// Probes the holder samples: tracepoint id → probe.
        var keyByTracepoint: [UInt64: UprobeTarget.Key] = [:]
        var armed: Set<UprobeTarget.Key> = []
        /// Runtime probes the holder samples: tracepoint id → probe.
        var runtimeByTracepoint: [UInt64: HeldRuntimeProbe] = [:]
        /// Runtime probes held, or tried and refused (those are not tried again).
        var armedRuntime: Set<RuntimeProbe.Key> = []
        var refusedRuntime: Set<RuntimeProbe.Key> = []
        var closed = false
        /// Hits read for a watched launch while another one drained: the rings are the process's,
        /// shared by every session, so one session's read must not lose another's hits.
        var pending: [Int32: [Sample]] = [:]
        /// Each watched process's latest hit, kept or not (see `repeatNs`).
        var lastHit: [Int32: Sample] = [:]
    }

    private let pmuType: UInt32
    private let cpus: [Int32]
    private let state = Mutex(State())
    /// Data pages per CPU ring buffer: room for ~6,500 hits between two reads.
    private static let dataPages: Int32 = 64
    /// A hit of the probe a process hit last, this soon after it, repeats it (a boundary hit
    /// again for real, in the next image of an exec chain, comes ≥ 100 µs later).
    private static let repeatNs: UInt64 = 50_000

    private static let sharedObserver = Mutex<UprobeObserver?>(nil)

    /// The process's observer; its probes are released when the process exits.
    public static func shared(pmuType: UInt32) -> UprobeObserver {
        sharedObserver.withLock { observer in
            if let observer, observer.pmuType == pmuType { return observer }
            // Without a holder every probe is the PMU's own: never open one while another
            // launchprof releases its own (see UprobeSupport.awaitEarlierReleases).
            if UprobeHolderClient.shared() == nil { UprobeSupport.awaitEarlierReleases() }
            let created = UprobeObserver(pmuType: pmuType)
            if observer == nil { atexit { UprobeObserver.releaseShared() } }
            observer?.close()
            observer = created
            return created
        }
    }

    private static func releaseShared() {
        let observer = sharedObserver.withLock { $0 }
        observer?.close()
    }

    public init(pmuType: UInt32) {
        self.pmuType = pmuType
        let count = max(Int32(sysconf(Int32(_SC_NPROCESSORS_CONF))), 1)
        cpus = Array(0..<count)
    }

    deinit { close() }

    /// Whether the probes' rings are this process's own (no holder), read only when a launch is
    /// drained: nothing empties them while a launch runs, so each launch must be drained before
    /// the next starts (a flood of hits in one would otherwise fill the rings for the next).
    public var ownsRings: Bool { state.withLock { !$0.rings.isEmpty } }

    /// Whether every target has its probe.
    public func isArmed(_ targets: [UprobeTarget]) -> Bool {
        state.withLock { state in targets.allSatisfy { state.armed.contains($0.key) } }
    }

    /// Opens the probes of `targets` not armed yet, on every CPU.
    public func arm(_ targets: [UprobeTarget]) throws(UprobeError) {
        try state.withLock { (state) throws(UprobeError) in
            guard !state.closed else { return }
            let holder = UprobeHolderClient.shared()
            for target in targets where !state.armed.contains(target.key) {
                if let tracepoint = holder?.hold(path: target.path, offset: target.offset, scope: .systemWide, lingers: target.isShared) {
                    state.keyByTracepoint[tracepoint] = target.key
                    state.armed.insert(target.key)
                    continue
                }
                for cpu in cpus {
                    var fd: Int32 = -1
                    var id: UInt64 = 0
                    var output: Int32 = -1
                    if let ring = state.rings[cpu] { output = ring.fd }
                    let error = lp_uprobe_open(-1, cpu, pmuType, target.path, target.offset, output, &fd, &id)
                    if error == ENODEV || error == EINVAL && state.rings[cpu] == nil && cpu > 0 { continue }  // offline CPU
                    guard error == 0 else {
                        throw .perf(operation: "uprobe open", subject: "\(target.path)+0x\(String(target.offset, radix: 16))", errno: error)
                    }
                    state.fds.append(fd)
                    state.keyByID[id] = target.key
                    if state.rings[cpu] == nil {
                        var base: UnsafeMutableRawPointer?
                        var length = 0
                        let mapError = lp_perf_ring_map(fd, Self.dataPages, &base, &length)
                        guard mapError == 0, let base else {
                            throw .perf(operation: "ring buffer mmap", subject: "CPU \(cpu)", errno: mapError)
                        }
                        state.rings[cpu] = Ring(fd: fd, base: base, length: length)
                    }
                }
                state.armed.insert(target.key)
            }
        }
    }

    /// Whether every runtime probe has been held (or refused) already.
    public func isArmed(runtime probes: [RuntimeProbe]) -> Bool {
        state.withLock { state in
            probes.allSatisfy { state.armedRuntime.contains($0.key) || state.refusedRuntime.contains($0.key) }
        }
    }

    /// Has the holder keep `probes` registered system-wide and sample their fetched values:
    /// those it could not hold (no holder — the PMU's own uprobes fetch nothing —, or a
    /// definition the kernel refused), for the caller to report what they would have shown.
    public func arm(runtime probes: [RuntimeProbe]) -> [RuntimeProbe] {
        state.withLock { state in
            guard !state.closed else { return probes }
            let holder = UprobeHolderClient.shared()
            var refused: [RuntimeProbe] = []
            for probe in probes where !state.armedRuntime.contains(probe.key) {
                if state.refusedRuntime.contains(probe.key) {
                    refused.append(probe)
                    continue
                }
                guard let held = holder?.hold(probe) else {
                    state.refusedRuntime.insert(probe.key)
                    refused.append(probe)
                    continue
                }
                state.runtimeByTracepoint[held.tracepoint] = HeldRuntimeProbe(key: probe.key, layout: held.layout, fetch: probe.fetch)
                state.armedRuntime.insert(probe.key)
            }
            return refused
        }
    }

    /// Keeps the hits of `pid` made from `since` (CLOCK_MONOTONIC ns) until it is drained,
    /// whichever session reads the rings first. Call it as soon as the process exists (its
    /// spawn), with a `since` before it runs any probed code.
    public func watch(pid: Int32, since: UInt64) {
        let holderProbes = state.withLock { state in
            state.pending[pid] = state.pending[pid] ?? []
            state.watchedSince[pid] = state.watchedSince[pid] ?? since
            return !state.keyByTracepoint.isEmpty
        }
        // Its hits kept apart from other processes' from now on, whatever else hits the probes.
        if holderProbes { UprobeHolderClient.shared()?.watch(pid: pid, sinceNs: since) }
    }

    /// Every hit of `pid` recorded since the last call, oldest first (hits of processes no
    /// session watches are dropped), and how many hits the buffers had no room for. Stops
    /// watching `pid`.
    public func drain(pid: Int32) -> Drained {
        drain(pids: [pid])[pid] ?? Drained()
    }

    /// `drain(pid:)` for several processes at once: one exchange with the holder for them all.
    public func drain(pids: [Int32]) -> [Int32: Drained] {
        state.withLock { state in
            var lost: UInt64 = 0
            // Only the PMU's own probes have rings here (with a holder there are none).
            var buffer = state.rings.isEmpty ? [] : [lp_perf_sample](repeating: lp_perf_sample(), count: 8192)
            for ring in state.rings.values {
                var count: Int32 = 0
                _ = lp_perf_ring_read(ring.base, ring.length, &buffer, Int32(buffer.count), &count, &lost)
                for sample in buffer[..<Int(count)] {
                    let owner = Int32(bitPattern: sample.pid)
                    guard pids.contains(owner) || state.pending[owner] != nil, let key = state.keyByID[sample.id] else { continue }
                    // A probe hit again and again (a spinning `main`) is kept once, as the holder
                    // does (perf_uprobe.c, holder_is_repeat): only the first hit is a boundary.
                    let hit = Sample(key: key, pid: owner, timeNs: sample.time_ns)
                    defer { state.lastHit[owner] = hit }
                    if let last = state.lastHit[owner], last.key == key, hit.timeNs >= last.timeNs,
                        hit.timeNs - last.timeNs < Self.repeatNs
                    {
                        continue
                    }
                    state.pending[owner, default: []].append(hit)
                }
            }
            var drained: [Int32: Drained] = [:]
            var requests: [UprobeHolderProtocol.ProcessHits.Query] = []
            for pid in pids {
                state.lastHit[pid] = nil
                drained[pid] = Drained(samples: state.pending.removeValue(forKey: pid) ?? [])
                requests.append(.init(pid: pid, sinceNs: state.watchedSince.removeValue(forKey: pid) ?? 0))
            }
            // The rings' lost count covers every process: it goes to the first launch.
            if let first = pids.first { drained[first]?.lost += lost }
            // One exchange gives both kinds of hits: the boundaries' and the runtime probes' with
            // their payloads (decoded here by each probe's layout).
            if !state.keyByTracepoint.isEmpty || !state.runtimeByTracepoint.isEmpty,
                let replies = UprobeHolderClient.shared()?.drain(requests)
            {
                for reply in replies {
                    drained[reply.pid]?.lost += reply.lost
                    drained[reply.pid]?.losses += reply.losses
                    for hit in reply.hits {
                        if let key = state.keyByTracepoint[hit.tracepoint] {
                            drained[reply.pid]?.samples.append(Sample(key: key, pid: reply.pid, timeNs: hit.timeNs))
                        }
                    }
                    for hit in reply.runtime {
                        guard let probe = state.runtimeByTracepoint[hit.tracepoint] else { continue }
                        drained[reply.pid]?.runtime.append(RuntimeProbeHit(
                            key: probe.key, thread: hit.thread, timeNs: hit.timeNs,
                            values: probe.layout.values(hit.payload, fetch: probe.fetch)))
                    }
                }
            }
            for pid in pids {
                drained[pid]?.samples.sort { $0.timeNs < $1.timeNs }
                drained[pid]?.runtime.sort { $0.timeNs < $1.timeNs }
            }
            return drained
        }
    }

    /// Removes every probe. The kernel's release of them is left to a short-lived process, so
    /// launchprof does not wait the grace periods.
    public func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            for ring in state.rings.values { lp_perf_ring_unmap(ring.base, ring.length) }
            state.rings = [:]
            if !state.fds.isEmpty { lp_perf_release_in_background(state.fds, Int32(state.fds.count)) }
            state.fds = []
        }
    }
}
