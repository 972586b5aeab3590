import CLaunchprof
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Samples one launch with perf events, without stopping it: on-CPU stacks every period of the
/// thread's CPU time (task clock), a stack at every switch-out with the switch records (how long
/// it was blocked or preempted) and its kernel frames (the system call it blocked in), and new
/// executable mappings (a `dlopen`). The kernel copies registers and the top of the user stack
/// into a ring buffer; `collect()` drains it on another thread; the stacks are unwound after the
/// launch (`SampleTimelineBuilder`), off the launch's CPU time.
///
/// The one Swift file facing perf's C surface.
public final class LaunchSampler: @unchecked Sendable {
    public struct Options: Sendable {
        public var rateHz: Int
        public var allThreads: Bool
        public var stackBytes: UInt32

        public init(rateHz: Int, allThreads: Bool, stackBytes: UInt32 = 8_192) {
            self.rateHz = rateHz
            self.allThreads = allThreads
            self.stackBytes = stackBytes
        }

        public var periodNs: UInt64 { 1_000_000_000 / UInt64(max(rateHz, 1)) }
    }

    /// What was captured, handed over by `finish()`.
    public struct Capture: Sendable {
        public var pid: Int32
        public var records: [PerfRecord]
        /// Executable file mappings when sampling started (the program, the loader).
        public var initialMappings: [StackSymbolizer.Mapping]
    }

    public let options: Options
    /// One session, or one per CPU with `allThreads` (the kernel maps inherited events' buffers
    /// only per CPU).
    private var sessions: [lp_perf_session] = []
    private var parser = PerfRecordParser()
    private let wake: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    // Owned by the collecting thread until `finish()`.
    private var records: [[PerfRecord]] = []
    private var buffer: [UInt8]
    private var pid: Int32 = 0
    private var initialMappings: [StackSymbolizer.Mapping] = []
    /// Set when the events could not be opened.
    public private(set) var failure: SamplingError?

    public init(options: Options) throws(SamplingError) {
        self.options = options
        var fds: [Int32] = [0, 0]
        let error = lp_pipe(&fds, true)
        guard error == 0 else { throw .system(operation: "pipe2", errno: error) }
        wake = (fds[0], fds[1])
        buffer = [UInt8](repeating: 0, count: 1 << 20)
    }

    deinit {
        for index in sessions.indices { lp_perf_close(&sessions[index]) }
        close(wake.read)
        close(wake.write)
    }

    /// Does once per process what would otherwise delay every launch: opens the anchor events
    /// that keep perf's kernel hooks switched on.
    public static func prepare() { _ = anchors }

    /// Never closed: they live as long as launchprof (see lp_perf_open_anchors).
    private static let anchors: [Int32] = {
        var fds: [Int32] = [-1, -1]
        _ = lp_perf_open_anchors(&fds)
        return fds
    }()

    /// Opens the events on `pid`, which has exec'd and must not run its first instruction
    /// before this returns (the tracer holds it at its exec stop). Call once, on any thread; a
    /// failure is kept in `failure`.
    public func start(pid: Int32) {
        self.pid = pid
        var error: Int32 = 0
        let cpus = options.allThreads ? Array(0..<Int32(max(sysconf(Int32(_SC_NPROCESSORS_CONF)), 1))) : [-1]
        for cpu in cpus {
            var session = lp_perf_session()
            // The child may wait at its exec stop for the buffer: small enough to cost tens of
            // µs (4 MiB took a millisecond, 256 KiB 50 µs), drained at half full.
            // Smaller still when the locked-memory limit refuses it.
            for pages: UInt32 in [64, 16] {
                var perf = lp_perf_options(
                    period_ns: options.periodNs, stack_bytes: options.stackBytes,
                    all_threads: options.allThreads, pages: pages)
                error = lp_perf_open(pid, cpu, &perf, &session)
                if error != EPERM && error != ENOMEM { break }
            }
            if error == ENODEV && cpu >= 0 { continue }  // an offline CPU
            guard error == 0 else { break }
            sessions.append(session)
            parser.clockIDs.insert(session.ids.0)
            parser.switchIDs.insert(session.ids.1)
        }
        records = Array(repeating: [], count: sessions.count)
        guard error == 0 || (error == ENODEV && !sessions.isEmpty) else {
            for index in sessions.indices { lp_perf_close(&sessions[index]) }
            sessions = []
            failure = .cannotOpenEvents(pid: pid, errno: error)
            return
        }
    }

    /// Reads the executable mappings the events did not see being made: the program's, the
    /// loader's and the vDSO, mapped by the exec. Call on the collecting thread once the child
    /// has reached its exec stop (the mappings are complete then), before `collect()`; the
    /// tracer need not wait for it, so the read stays out of the launch. Mappings the loader has
    /// made by then come twice, here and as records, which is harmless.
    public func readInitialMappings() {
        guard failure == nil, !stopped.load(ordering: .acquiring) else { return }
        initialMappings = ProcessMappings.executable(pid)
    }

    /// Drains the ring buffer whenever it passes its watermark, until `stop()`. Run it on a
    /// thread of its own while the launch runs.
    public func collect() {
        guard failure == nil, !sessions.isEmpty else { return }
        while !stopped.load(ordering: .acquiring) {
            _ = sessions.withUnsafeBufferPointer { lp_perf_wait($0.baseAddress!, Int32($0.count), wake.read, 200) }
            drain()
        }
    }

    /// Ends `collect()`.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// The records, after `collect()` has returned (or was never run). Closes the events.
    public func finish() -> Capture {
        drain()
        for index in sessions.indices { lp_perf_close(&sessions[index]) }
        sessions = []
        let capture = Capture(
            pid: pid, records: Self.merged(records), initialMappings: initialMappings)
        records = []
        return capture
    }

    private func drain() {
        for index in sessions.indices {
            while true {
                var length = 0
                let capacity = buffer.count
                let error = buffer.withUnsafeMutableBytes { bytes in
                    lp_perf_drain(&sessions[index], bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity, &length)
                }
                guard error == 0, length > 0 else { break }
                buffer.withUnsafeBytes { bytes in
                    parser.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<length]), into: &records[index])
                }
            }
        }
    }

    /// One buffer's records are in time order; several (one per CPU) are merged by time, a
    /// loss report keeping the time of the record before it.
    static func merged(_ buffers: [[PerfRecord]]) -> [PerfRecord] {
        guard buffers.count > 1 else { return buffers.first ?? [] }
        var timed: [(time: UInt64, buffer: Int, index: Int, record: PerfRecord)] = []
        for (buffer, records) in buffers.enumerated() {
            var last: UInt64 = 0
            for (index, record) in records.enumerated() {
                last = record.timeNs ?? last
                timed.append((last, buffer, index, record))
            }
        }
        timed.sort { ($0.time, $0.buffer, $0.index) < ($1.time, $1.buffer, $1.index) }
        return timed.map(\.record)
    }
}
