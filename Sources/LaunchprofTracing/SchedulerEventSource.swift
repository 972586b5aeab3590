import LaunchprofSystem
import CLaunchprof
import LaunchprofReport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's scheduler events around each launch (sched_events.c): opened once, on the thread
/// that will spawn the children, and enabled for each launch — `begin()` before the spawn,
/// `end()` after the child is reaped. Between the two, `collect()` (on a thread of its own)
/// empties the rings when they fill past half; the records are decoded after `end()`, off the
/// launch's CPU time.
///
/// The one Swift file facing the C of sched_events.c.
public final class SchedulerEventSource: @unchecked Sendable {
    /// Why thread states cannot be recorded here, in words for the report.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    private var cpus: [lp_sched_cpu] = []
    private let formats: TracepointFormats
    private let wake: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    /// Owned by the collecting thread between `begin()` and `end()`.
    private var raw: [[UInt8]]
    private var buffer: [UInt8]
    private var wakeupsAbove: Int32 = 0
    /// The thread the events follow (and its process).
    public let spawningThread: Int32

    /// Opens the events on every online CPU, following the calling thread: call it on the thread
    /// that spawns the children (the tracer's).
    public init() throws(Unavailable) {
        guard Self.inInitialPIDNamespace() else {
            throw Unavailable(description: "launchprof runs in a PID namespace: the scheduler's tracepoints carry the host's ids")
        }
        guard let formats = TracepointFormats.read() else {
            throw Unavailable(description: "the sched tracepoints are not readable in tracefs (needs root)")
        }
        self.formats = formats
        spawningThread = lp_sched_thread_id()
        var fds: [Int32] = [0, 0]
        guard lp_pipe(&fds, true) == 0 else { throw Unavailable(description: "pipe2 failed") }
        wake = (fds[0], fds[1])
        let online = Self.onlineCPUs()
        // A ring per CPU, 1 MiB each up to 32 MiB in all: a 400 ms desktop launch on a busy
        // machine writes ~1 MB, drained at half full.
        let pages = UInt32(max(16, min(256, (32 << 20) / 4096 / max(online.count, 1))))
        let ringPages = UInt32(1) << (31 - UInt32(pages).leadingZeroBitCount)
        var tracepoints = lp_sched_tracepoints(
            sched_switch: formats.sched_switch.id, sched_waking: formats.sched_waking.id,
            sched_wakeup_new: formats.sched_wakeup_new.id, page_cache_add: formats.pageCacheAdd?.id ?? -1)
        for cpu in online {
            var events = lp_sched_cpu()
            let error = lp_sched_open(spawningThread, cpu, &tracepoints, ringPages, &events)
            if error == ENODEV { continue }  // went offline
            guard error == 0 else {
                for index in cpus.indices { lp_sched_close(&cpus[index]) }
                close(wake.read)
                close(wake.write)
                throw Unavailable(description: "perf_event_open on the sched tracepoints failed: \(String(cString: strerror(error)))"
                    + (error == EACCES || error == EPERM ? " (needs root or CAP_PERFMON)" : "")
                    + (error == EMFILE ? " (6 descriptors per CPU: raise the open-file limit)" : ""))
            }
            cpus.append(events)
        }
        raw = Array(repeating: [], count: cpus.count)
        buffer = [UInt8](repeating: 0, count: 1 << 20)
    }

    deinit {
        // The last close of each tracepoint's events waits for the kernel to unregister it
        // (~30 ms each, ~110 ms for the four): launchprof's exit need not.
        if !cpus.isEmpty { lp_sched_close_in_background(&cpus, Int32(cpus.count)) }
        close(wake.read)
        close(wake.write)
    }

    /// Enables the events, just before a spawn, on the thread given to `init` (only tasks it
    /// creates from now on are followed). Wake-ups are recorded for tasks created from now on.
    public func begin() {
        stopped.store(false, ordering: .releasing)
        var byte: UInt8 = 0
        while read(wake.read, &byte, 1) > 0 {}
        raw = Array(repeating: [], count: cpus.count)
        if let last = SmallFile.read("/proc/sys/kernel/ns_last_pid").flatMap({ Int32($0.trimmingWhitespace) }) {
            wakeupsAbove = last
            for index in cpus.indices { _ = lp_sched_filter_wakeups(&cpus[index], "pid > \(last)") }
        }
        for index in cpus.indices { _ = lp_sched_enable(&cpus[index], true) }
    }

    /// Empties the rings whenever one passes half full, until `stop()`. Run it on a thread of
    /// its own while the launch runs.
    public func collect() {
        while !stopped.load(ordering: .acquiring) {
            _ = cpus.withUnsafeBufferPointer { lp_sched_wait($0.baseAddress!, Int32($0.count), wake.read, 500) }
            drain()
        }
    }

    /// Ends `collect()`.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Disables the events (after `collect()` has returned, or was never run) and decodes what
    /// they recorded.
    public func end() -> SchedulerCapture {
        for index in cpus.indices { _ = lp_sched_enable(&cpus[index], false) }
        drain()
        var parser = SchedulerRecordParser(formats: formats)
        for (index, bytes) in raw.enumerated() {
            parser.identify(cpus[index])
            bytes.withUnsafeBytes { parser.parse($0) }
        }
        raw = Array(repeating: [], count: cpus.count)
        var capture = parser.capture
        capture.spawningThread = spawningThread
        capture.launchprofPID = getpid()
        capture.wakeupsAbove = wakeupsAbove
        capture.sort()
        return capture
    }

    private func drain() {
        for index in cpus.indices {
            while true {
                var length = 0
                let capacity = buffer.count
                let error = buffer.withUnsafeMutableBytes { bytes in
                    lp_sched_drain(&cpus[index], bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity, &length)
                }
                guard error == 0, length > 0 else { break }
                raw[index] += buffer[0..<length]
            }
        }
    }

    static func onlineCPUs() -> [Int32] {
        // "0-3,5": ranges of online CPUs.
        guard let text = SmallFile.read("/sys/devices/system/cpu/online") else {
            return Array(0..<Int32(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1)))
        }
        var cpus: [Int32] = []
        for part in text.trimmingWhitespace.split(separator: ",") {
            let bounds = part.split(separator: "-").compactMap { Int32($0) }
            if bounds.count == 1 { cpus.append(bounds[0]) }
            if bounds.count == 2, bounds[0] <= bounds[1] { cpus += Array(bounds[0]...bounds[1]) }
        }
        return cpus
    }

    /// Tracepoints carry ids as the initial namespace sees them; perf's sample ids are the
    /// reader's. They agree only there.
    static func inInitialPIDNamespace() -> Bool {
        guard let status = SmallFile.read("/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") })
        else { return true }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).count == 2
    }
}

extension String {
    var trimmingWhitespace: String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
