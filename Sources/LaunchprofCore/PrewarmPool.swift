import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof prewarm --pool N`: Android's pre-forked pool. N slots each keep one process frozen
/// (each slot is a tracer thread of its own: ptrace has thread affinity, and a frozen process is
/// its tracer's stopped tracee). The user's launches arrive `--hold` apart; a launch takes a
/// frozen process when one is ready (a hit) and launches cold otherwise (a miss); the slot
/// refills at once. `--ttl` ends a process frozen longer than that, cleanly, and refills.
/// Every launch is paired with an ordinary launch on the coordinator's own tracer thread.
final class PrewarmPool: @unchecked Sendable {
    private let session: PrewarmSession
    private var configuration: PrewarmConfiguration { session.configuration }

    /// What the slots tell the coordinator, under one lock.
    private struct Shared {
        /// Frozen processes ready for a launch, by slot.
        var frozen: [Int: PrewarmSession.FreezeRecord] = [:]
        /// Completed launches handed back by slots that were told to go.
        var finished: [Int: Result<(MeasuredRun, PrewarmSession.FreezeRecord), RunError>] = [:]
        var refills: [UInt64] = []
        var expired = 0
        var stopping = false
        /// Whether "pool ready" was said (once, the first time every slot held a frozen process).
        var announcedReady = false
    }

    private let shared = Mutex(Shared())
    /// Slots write a byte here when something changed.
    private let events: (read: Int32, write: Int32)

    init(session: PrewarmSession) {
        self.session = session
        var fds: [Int32] = [0, 0]
        _ = lp_pipe(&fds, true)
        events = (fds[0], fds[1])
    }

    deinit {
        close(events.read)
        close(events.write)
    }

    /// The pool's figures, once `makeRuns` is done.
    private(set) var summary: PrewarmSummary.PoolSummary?

    /// The batch's launches, on the calling thread (the coordinator), the slots on their own.
    func makeRuns(
        _ batch: LaunchBatch, context: LaunchContext, finished: (Int, MeasuredRun) throws(RunError) -> Void
    ) throws(RunError) {
        let size = configuration.pool
        var opened: [(read: Int32, write: Int32)] = []
        for _ in 0..<size {
            var fds: [Int32] = [0, 0]
            let error = lp_pipe(&fds, false)
            guard error == 0 else {
                for gate in opened { close(gate.read); close(gate.write) }
                throw .system(operation: "pipe2", errno: error)
            }
            opened.append((fds[0], fds[1]))
        }
        let gates = opened
        defer { for gate in gates { close(gate.read); close(gate.write) } }
        var slots: [DedicatedThread<Void>] = []
        for slot in 0..<size {
            slots.append(DedicatedThread { [self] in slotLoop(slot, gate: gates[slot].read) })
        }
        defer {
            // Stop the slots: every frozen process is ended (`x`), none is left behind.
            shared.withLock { $0.stopping = true }
            for gate in gates {
                var stop = UInt8(ascii: "x")
                _ = write(gate.write, &stop, 1)
            }
            for slot in slots { slot.join() }
        }
        let freezeAt = configuration.freezeAt
        var generator = SplitMix64(seed: configuration.seed)
        var held: [UInt64] = []
        var hits = 0
        for launch in 0..<batch.count {
            let index = batch.index(of: launch)
            let tapAt = lp_now_ns() &+ configuration.hold.draw(using: &generator)
            // Until the tap: end processes frozen past their TTL (their slot refills).
            while lp_now_ns() < tapAt, lp_interrupted() == 0 {
                expireStale(gates: gates)
                PrewarmSession.wait(until: min(tapAt, lp_now_ns() &+ 50_000_000), pipe: events.read)
            }
            expireStale(gates: gates)
            if lp_interrupted() != 0 { throw .interrupted(signal: lp_interrupted()) }
            held.append(shared.withLock { $0.frozen.values.reduce(0) { $0 + ($1.pss ?? 0) } })
            let taken: Int? = shared.withLock { state in
                guard let slot = state.frozen.keys.min() else { return nil }
                state.frozen[slot] = nil
                return slot
            }
            var measured: MeasuredRun
            var record: PrewarmSession.FreezeRecord
            if let slot = taken {
                var go = UInt8(ascii: "g")
                _ = write(gates[slot].write, &go, 1)
                (measured, record) = try awaitFinished(slot).get()
                if !batch.isWarmup(launch) { hits += 1 }
            } else {
                // A miss: the user waits for a whole launch, so it counts from its spawn.
                measured = try session.runSession.launchOnce(index: index, context: context)
                record = PrewarmSession.FreezeRecord()
            }
            let ordinary = try session.runSession.launchOnce(index: index, context: context).run
            if lp_interrupted() != 0 { throw .interrupted(signal: lp_interrupted()) }
            let run = measured.run
            if record.frozen {
                measured.run = try PrewarmSession.combine(run, record: record, ordinary: ordinary, freezeAt: freezeAt)
            } else {
                var prewarm = PrewarmRun(freezeAt: freezeAt.rawValue, prewarmNs: 0, holdNs: 0, resumeAtNs: 0)
                measured.run.metrics.optimizedTimeToFirstFrameNs = run.metrics.timeToFirstFrameNs
                prewarm.pair(with: ordinary, optimizedTimeToFirstFrameNs: run.metrics.timeToFirstFrameNs, prewarmedCompleted: !run.failed)
                measured.run.prewarm = prewarm
            }
            measured.run.prewarm?.poolHit = taken != nil
            measured.run.index = index
            try finished(launch, measured)
        }
        let state = shared.withLock { $0 }
        var heldStats = StreamingStatistics()
        for value in held.suffix(batch.runs) { heldStats.record(value) }
        var refillStats = StreamingStatistics()
        for value in state.refills { refillStats.record(value) }
        summary = PrewarmSummary.PoolSummary(
            size: configuration.pool, launches: batch.runs, hits: hits,
            expired: state.expired, heldPSSBytes: heldStats.summary, refillNs: refillStats.summary,
            ttlNs: configuration.ttlNs)
    }

    /// Tells slots whose process has been frozen longer than `--ttl` to end it.
    private func expireStale(gates: [(read: Int32, write: Int32)]) {
        guard let ttl = configuration.ttlNs else { return }
        let now = lp_now_ns()
        let stale: [Int] = shared.withLock { state in
            let slots = state.frozen.filter { now &- $0.value.stoppedAt >= ttl }.map(\.key)
            for slot in slots { state.frozen[slot] = nil }
            state.expired += slots.count
            return slots
        }
        for slot in stale {
            var expire = UInt8(ascii: "x")
            _ = write(gates[slot].write, &expire, 1)
        }
    }

    private func awaitFinished(_ slot: Int) -> Result<(MeasuredRun, PrewarmSession.FreezeRecord), RunError> {
        while true {
            if let result = shared.withLock({ $0.finished.removeValue(forKey: slot) }) { return result }
            if lp_interrupted() != 0 { return .failure(.interrupted(signal: lp_interrupted())) }
            PrewarmSession.wait(until: lp_now_ns() &+ 50_000_000, pipe: events.read)
        }
    }

    /// One slot: prewarm, freeze, wait for the coordinator; after the launch (or the TTL), refill.
    private func slotLoop(_ slot: Int, gate: Int32) {
        let monitorThread: MonitorThread
        do throws(RunError) {
            monitorThread = try MonitorThread()
        } catch {
            return  // no prewarmed process from this slot: the coordinator's launches miss
        }
        defer { monitorThread.stop() }
        let wake = events.write
        while lp_interrupted() == 0, !shared.withLock({ $0.stopping }) {
            let result: Result<(MeasuredRun, PrewarmSession.FreezeRecord), RunError>
            do throws(RunError) {
                result = .success(try session.prewarmedLaunch(
                    index: 0, context: LaunchContext(cpus: [], monitorThread: monitorThread),
                    gate: .pipe(read: gate, onFrozen: { [self] record in
                        let ready = shared.withLock { state -> [Int32]? in
                            state.refills.append(record.stoppedAt &- record.spawnedAt)
                            if !state.stopping { state.frozen[slot] = record }
                            guard !state.announcedReady, state.frozen.count == configuration.pool else { return nil }
                            state.announcedReady = true
                            return state.frozen.keys.sorted().compactMap { state.frozen[$0]?.pid }
                        }
                        if let ready {
                            StatusLine.say(
                                "pool ready: \(ready.count) process(es) frozen at \(configuration.freezeAt.rawValue) (\(ready.map(String.init).joined(separator: ", ")))")
                        }
                        var byte = UInt8(ascii: "f")
                        _ = write(wake, &byte, 1)
                    })))
            } catch {
                result = .failure(error)
            }
            if case .success(let (_, record)) = result, record.expired { continue }
            // It failed before its freeze point: refilling would fail the same way; the
            // coordinator's launches miss and report the failure themselves.
            if case .success(let (_, record)) = result, !record.frozen { return }
            let stopping = shared.withLock { state -> Bool in
                if !state.stopping { state.finished[slot] = result }
                return state.stopping
            }
            var byte = UInt8(ascii: "d")
            _ = write(wake, &byte, 1)
            if stopping { return }
            if case .failure = result { return }
        }
    }
}
