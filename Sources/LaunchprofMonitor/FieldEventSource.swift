import LaunchprofSystem
import CLaunchprof
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's side of the monitor: perf events on tracepoints and on the monitor's uprobes, one per event and CPU for every process, all of a CPU sampling into one ring buffer
/// that this object maps and reads (`lp_field.h` is the C that faces perf). Events are opened
/// disabled and enabled together, so nothing is half set up while the first samples come.
///
/// The only place the monitor's probes exist: closing these descriptors (`close()`, or the
/// process dying, SIGKILL included) is what removes them from every process.
public final class FieldEventSource: @unchecked Sendable {
    private struct Ring {
        var cpu: Int32
        var fd: Int32
        var base: UnsafeMutableRawPointer
        var length: Int
    }

    /// Data pages per CPU ring (a power of two).
    public let dataPages: Int32
    /// A poll on a ring wakes once this much waits in it.
    let wakeupBytes: UInt32

    public private(set) var decoder = FieldRecordDecoder()
    private var rings: [Ring] = []
    private var eventFDs: [Int32] = []
    public let cpus: [Int32]
    /// Samples the kernel could not write (a full ring), and samples that did not parse.
    public private(set) var lost: UInt64 = 0
    public private(set) var malformed: UInt64 = 0

    private let recordCapacity = 16_384
    private let rawCapacity = 2 << 20
    private let records: UnsafeMutablePointer<lp_field_record>
    private let raw: UnsafeMutablePointer<UInt8>

    /// - Parameters:
    ///   - dataPages: per CPU; 128 (512 KiB) holds ~8,000 launches' fork, exec and loader samples.
    ///   - wakeupBytes: a poll wakes once this much waits; nil: a quarter of a ring (otherwise the
    ///     monitor reads on its tick).
    public init(cpus: [Int32] = FieldEventSource.onlineCPUs(), dataPages: Int32 = 128, wakeupBytes: UInt32? = nil) throws(MonitorError) {
        self.cpus = cpus
        self.dataPages = dataPages
        self.wakeupBytes = wakeupBytes ?? UInt32(dataPages) * 4096 / 4
        records = .allocate(capacity: recordCapacity)
        raw = .allocate(capacity: rawCapacity)
    }

    deinit {
        close()
        records.deallocate()
        raw.deallocate()
    }

    /// Opens `tracepoint` on every CPU with `rule` for its samples; `filter` is the kernel's
    /// event filter, when one spares the rings samples the monitor would drop anyway.
    public func add(tracepoint: UInt64, name: String, filter: String? = nil, rule: FieldRecordDecoder.Rule) throws(MonitorError) {
        for cpu in cpus {
            let output = rings.first { $0.cpu == cpu }?.fd ?? -1
            var fd: Int32 = -1
            var id: UInt64 = 0
            let error = lp_field_event_open(tracepoint, cpu, output, filter, wakeupBytes, &fd, &id)
            guard error == 0 else { throw .kernelEvent(what: "\(name) on CPU \(cpu)", errno: error) }
            eventFDs.append(fd)
            decoder.add(id: id, rule)
            if output < 0 {
                var base: UnsafeMutableRawPointer?
                var length = 0
                let mapped = lp_perf_ring_map(fd, dataPages, &base, &length)
                guard mapped == 0, let base else { throw .kernelEvent(what: "the ring buffer of CPU \(cpu)", errno: mapped) }
                rings.append(Ring(cpu: cpu, fd: fd, base: base, length: length))
            }
        }
    }

    /// Starts every event added.
    public func enable() throws(MonitorError) {
        for fd in eventFDs {
            let error = lp_field_event_enable(fd)
            guard error == 0 else { throw .kernelEvent(what: "enabling an event", errno: error) }
        }
    }

    /// The descriptors a poll waits on (readable once a ring is a quarter full).
    public var pollDescriptors: [Int32] { rings.map(\.fd) }

    /// Everything waiting in the rings, decoded, in time order within each ring.
    public func read() -> [FieldEvent] {
        var events: [FieldEvent] = []
        for ring in rings {
            var more: Int32 = 1
            while more != 0 {
                var count: Int32 = 0
                var lostNow: UInt64 = 0
                var malformedNow: UInt64 = 0
                lp_field_ring_read(
                    ring.base, ring.length, records, Int32(recordCapacity), raw, rawCapacity, &count, &lostNow,
                    &malformedNow, &more)
                lost += lostNow
                malformed += malformedNow
                for index in 0..<Int(count) {
                    let record = records[index]
                    let bytes = UnsafeRawBufferPointer(start: raw + Int(record.raw_offset), count: Int(record.raw_size))
                    let decoded = decoder.decode(id: record.id, pid: record.pid, tid: record.tid, timeNs: record.time_ns, raw: bytes)
                    if decoded.malformed { malformed += 1 }
                    if let event = decoded.event { events.append(event) }
                }
            }
        }
        return events
    }

    /// Closes every event: the monitor's probes leave every process (a tracefs event's last
    /// close releases its uprobe).
    public func close() {
        for ring in rings { lp_perf_ring_unmap(ring.base, ring.length) }
        rings = []
        for fd in eventFDs { Glibc.close(fd) }
        eventFDs = []
    }

    /// The online CPUs, from `/sys/devices/system/cpu/online` ("0-3,6").
    public static func onlineCPUs() -> [Int32] {
        let text = SmallFile.read("/sys/devices/system/cpu/online") ?? ""
        let cpus = parseCPUList(text)
        return cpus.isEmpty ? Array(0..<Int32(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1))) : cpus
    }

    static func parseCPUList(_ text: String) -> [Int32] {
        var cpus: [Int32] = []
        for part in text.split(whereSeparator: { $0 == "," || $0 == "\n" }) {
            let bounds = part.split(separator: "-").compactMap { Int32($0) }
            if bounds.count == 1 { cpus.append(bounds[0]) }
            if bounds.count == 2, bounds[0] <= bounds[1], bounds[1] - bounds[0] < 4096 { cpus += Array(bounds[0]...bounds[1]) }
        }
        return cpus
    }
}

extension FieldEventSource {
    /// The process events every monitor reads: execs (with the file name), process creations
    /// (threads are dropped), and stop and continue signals (a launch resumed from a freeze).
    public func addProcessEvents(_ tracefs: TracefsEvents) throws(MonitorError) {
        let exec = try tracefs.tracepoint("sched/sched_process_exec")
        guard let filename = exec.fields["filename"], let pid = exec.fields["pid"] else {
            throw .kernelEvent(what: "sched/sched_process_exec (no filename or pid field)", errno: EINVAL)
        }
        try add(tracepoint: exec.id, name: "sched/sched_process_exec", rule: .exec(filename: filename, pid: pid))
        let task = try tracefs.tracepoint("task/task_newtask")
        guard let child = task.fields["pid"], let flags = task.fields["clone_flags"] else {
            throw .kernelEvent(what: "task/task_newtask (no pid or clone_flags field)", errno: EINVAL)
        }
        // Threads (CLONE_THREAD) are no processes: the kernel drops them before they reach a ring
        // (a process starting threads is no sample per thread); a kernel that refuses the
        // filter's negation sends them, and the decoder drops them.
        let rule = FieldRecordDecoder.Rule.newTask(pid: child, cloneFlags: flags)
        do throws(MonitorError) {
            try add(tracepoint: task.id, name: "task/task_newtask", filter: "!(clone_flags & 0x10000)", rule: rule)
        } catch {
            try add(tracepoint: task.id, name: "task/task_newtask", rule: rule)
        }
        // Sent, not delivered: a SIGCONT nobody handles is never delivered, yet it resumes the
        // process as it is sent. Only SIGCONT and the stop signals: anything else would be a sample
        // dropped.
        let signal = try tracefs.tracepoint("signal/signal_generate")
        guard let number = signal.fields["sig"], let target = signal.fields["pid"] else {
            throw .kernelEvent(what: "signal/signal_generate (no sig or pid field)", errno: EINVAL)
        }
        try add(
            tracepoint: signal.id, name: "signal/signal_generate", filter: "sig >= 18 && sig <= 22",
            rule: .signal(number: number, target: target))
    }
}
