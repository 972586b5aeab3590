import LaunchprofSystem
import CLaunchprof
import LaunchprofReport
import LaunchprofSampling

#if canImport(Glibc)
import Glibc
#endif

/// What `SchedulerEventSource` recorded around one launch, decoded; kernel stacks still as
/// addresses (`trace(symbols:)` names them).
public struct SchedulerCapture: Sendable {
    public var switches: [SchedulerTrace.Switch] = []
    /// Switch-outs of followed tasks, with an index into `addressStacks`.
    public var followedSwitchOuts: [SchedulerTrace.StackedSwitch] = []
    public var switchIns: [SchedulerTrace.SwitchIn] = []
    public var addressStacks: [[UInt64]] = []
    public var wakeups: [SchedulerTrace.Wakeup] = []
    public var newTasks: [SchedulerTrace.Wakeup] = []
    public var majorFaults: [SchedulerTrace.MajorFault] = []
    public var mappings: [SchedulerTrace.FileMapping] = []
    public var pageCacheAdds: [SchedulerTrace.PageCacheAdd] = []
    public var lostRecords: UInt64 = 0
    public var launchprofPID: Int32 = 0
    public var spawningThread: Int32 = 0
    public var wakeupsAbove: Int32 = 0

    public init() {}

    /// Every list in time order (the rings are, one CPU at a time).
    mutating func sort() {
        switches.sort { $0.timeNs < $1.timeNs }
        followedSwitchOuts.sort { $0.record.timeNs < $1.record.timeNs }
        switchIns.sort { $0.timeNs < $1.timeNs }
        wakeups.sort { $0.timeNs < $1.timeNs }
        newTasks.sort { $0.timeNs < $1.timeNs }
        majorFaults.sort { $0.timeNs < $1.timeNs }
        mappings.sort { $0.timeNs < $1.timeNs }
        pageCacheAdds.sort { $0.timeNs < $1.timeNs }
    }

    /// The trace, its stacks named by `symbols` (no names: no stacks), `knownFiles` (paths)
    /// identified by device and inode for reads of files the process did not map.
    public func trace(symbols: KernelSymbols, knownFiles: [String] = []) -> SchedulerTrace {
        // No stack recorded, no kallsyms read.
        let named = addressStacks.isEmpty || symbols.isEmpty ? [] : addressStacks.map { symbols.names($0) ?? [] }
        return SchedulerTrace(
            switches: switches, wakeups: wakeups, newTasks: newTasks,
            followedSwitchOuts: named.isEmpty ? followedSwitchOuts.map { .init(record: $0.record, stack: nil) } : followedSwitchOuts,
            followedSwitchIns: switchIns,
            stacks: named, majorFaults: majorFaults, mappings: mappings, pageCacheAdds: pageCacheAdds,
            knownFiles: Self.identities(knownFiles), lostRecords: lostRecords, launchprofPID: launchprofPID, spawningThread: spawningThread,
            wakeupsAbove: wakeupsAbove)
    }
}

extension SchedulerCapture {
    /// The files' device (as the kernel splits it: glibc's major/minor encoding) and inode.
    static func identities(_ paths: [String]) -> [SchedulerTrace.FileIdentity: String] {
        var result: [SchedulerTrace.FileIdentity: String] = [:]
        for path in paths {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            let device = UInt64(status.st_dev)
            let major = UInt32((device >> 8) & 0xfff | (device >> 32) & ~0xfff)
            let minor = UInt32(device & 0xff | (device >> 12) & ~0xff)
            let identity = SchedulerTrace.FileIdentity(device: .init(major: major, minor: minor), inode: UInt64(status.st_ino))
            if result[identity] == nil { result[identity] = path }
        }
        return result
    }
}

/// Field offsets of the tracepoints' raw records, from their tracefs `format` files (they move
/// between kernel versions).
struct TracepointFormats: Sendable {
    struct Format: Sendable {
        var id: Int32
        var offsets: [String: (offset: Int, size: Int)]

        func field(_ name: String) -> (offset: Int, size: Int)? { offsets[name] }
    }

    var sched_switch: Format
    var sched_waking: Format
    var sched_wakeup_new: Format
    /// Absent on kernels without the filemap tracepoints.
    var pageCacheAdd: Format?

    static func read() -> TracepointFormats? {
        var roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        if let root = UprobeHolder.tracefsRoot(), !roots.contains(root) { roots.insert(root, at: 0) }
        for root in roots {
            func format(_ event: String) -> Format? { Self.format(SmallFile.read("\(root)/events/\(event)/format")) }
            guard let sched_switch = format("sched/sched_switch"), let sched_waking = format("sched/sched_waking"),
                let sched_wakeup_new = format("sched/sched_wakeup_new")
            else { continue }
            let formats = TracepointFormats(
                sched_switch: sched_switch, sched_waking: sched_waking, sched_wakeup_new: sched_wakeup_new,
                pageCacheAdd: format("filemap/mm_filemap_add_to_page_cache"))
            guard formats.usable else { return nil }
            return formats
        }
        return nil
    }

    /// Every field the parser reads is present, inside the record, of the size it reads.
    var usable: Bool {
        let needed: [(Format, String, Int)] = [
            (sched_switch, "common_flags", 1), (sched_switch, "prev_comm", 16), (sched_switch, "prev_pid", 4),
            (sched_switch, "prev_state", 8), (sched_switch, "next_comm", 16), (sched_switch, "next_pid", 4),
            (sched_waking, "common_flags", 1), (sched_waking, "comm", 16), (sched_waking, "pid", 4),
            (sched_wakeup_new, "comm", 16), (sched_wakeup_new, "pid", 4),
        ]
        return needed.allSatisfy { format, name, size in format.field(name)?.size == size }
    }

    /// "ID: 372" and lines "field:TYPE NAME;\toffset:N;\tsize:M;\tsigned:S;".
    static func format(_ text: String?) -> Format? {
        guard let text else { return nil }
        var id: Int32?
        var offsets: [String: (Int, Int)] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("ID:") { id = Int32(String(trimmed.dropFirst(3)).trimmingWhitespace) }
            guard trimmed.hasPrefix("field:") else { continue }
            let parts = trimmed.split(separator: ";").map { $0.drop { $0 == " " || $0 == "\t" } }
            guard parts.count >= 3, let declaration = parts.first?.dropFirst("field:".count) else { continue }
            // The name is the declaration's last word, without an array's brackets.
            guard var name = declaration.split(separator: " ").last.map(String.init) else { continue }
            if let bracket = name.firstIndex(of: "[") { name = String(name[..<bracket]) }
            func value(_ key: String) -> Int? {
                parts.first { $0.hasPrefix(key + ":") }.flatMap { Int($0.dropFirst(key.count + 1)) }
            }
            guard let offset = value("offset"), let size = value("size") else { continue }
            offsets[name] = (offset, size)
        }
        guard let id else { return nil }
        return Format(id: id, offsets: offsets)
    }
}

/// Decodes the records of `SchedulerEventSource`'s rings. Samples start with their event's
/// identifier (PERF_SAMPLE_IDENTIFIER), then {pid, tid}, time, {cpu, _}, and by event: the
/// faulting address before the cpu (major faults), the kernel call chain (followed switches),
/// the tracepoint's raw record. Other records end with the trailer {pid, tid}, time, {cpu, _},
/// identifier.
struct SchedulerRecordParser {
    let formats: TracepointFormats
    /// Event kind (LP_SCHED_*) by identifier.
    private var kinds: [UInt64: Int] = [:]
    private(set) var capture = SchedulerCapture()
    private var stackIndex: [[UInt64]: Int] = [:]

    init(formats: TracepointFormats) {
        self.formats = formats
    }

    mutating func identify(_ events: lp_sched_cpu) {
        withUnsafeBytes(of: events.ids) { ids in
            for kind in 0..<Int(LP_SCHED_EVENT_COUNT) {
                let id = ids.load(fromByteOffset: kind * 8, as: UInt64.self)
                if id != 0 { kinds[id] = kind }
            }
        }
    }

    mutating func parse(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset + 8 <= bytes.count {
            let type = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            let misc = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            let size = Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
            guard size >= 8, offset + size <= bytes.count else { break }
            decode(type: type, misc: misc, UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)]))
            offset += size
        }
    }

    private mutating func decode(type: UInt32, misc: UInt16, _ r: UnsafeRawBufferPointer) {
        func u64(_ at: Int) -> UInt64 { at >= 0 && at + 8 <= r.count ? r.loadUnaligned(fromByteOffset: at, as: UInt64.self) : 0 }
        func u32(_ at: Int) -> UInt32 { at >= 0 && at + 4 <= r.count ? r.loadUnaligned(fromByteOffset: at, as: UInt32.self) : 0 }
        switch type {
        case 9:  // PERF_RECORD_SAMPLE
            guard let kind = kinds[u64(8)] else { return }
            let pid = Int32(bitPattern: u32(16)), tid = Int32(bitPattern: u32(20))
            let time = u64(24)
            var at = 32
            var address: UInt64 = 0
            if kind == Int(LP_SCHED_FOLLOWED_FAULT) {
                address = u64(at)
                at += 8
            }
            let cpu = Int32(bitPattern: u32(at))
            at += 8
            var stack: [UInt64] = []
            if kind == Int(LP_SCHED_FOLLOWED_SWITCH) {
                // A count, then addresses with context markers (the top 4095 values) among them.
                let count = Int(min(u64(at), UInt64(r.count / 8)))
                at += 8
                stack = (0..<count).map { u64(at + $0 * 8) }.filter { $0 < UInt64.max - 4094 }
                at += count * 8
            }
            if kind == Int(LP_SCHED_FOLLOWED_FAULT) {
                capture.majorFaults.append(.init(timeNs: time, pid: pid, tid: tid, address: address))
                return
            }
            let rawSize = Int(u32(at))
            guard rawSize > 0, at + 4 + rawSize <= r.count else { return }
            let raw = UnsafeRawBufferPointer(rebasing: r[(at + 4)..<(at + 4 + rawSize)])
            record(kind: kind, raw: raw, pid: pid, tid: tid, time: time, cpu: cpu, stack: stack)
        case 10:  // PERF_RECORD_MMAP2
            // pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename
            let nameStart = 72
            guard nameStart < r.count - 32 else { return }
            var nameEnd = nameStart
            while nameEnd < r.count - 32, r[nameEnd] != 0 { nameEnd += 1 }
            let path = String(decoding: r[nameStart..<nameEnd], as: UTF8.self)
            guard path.hasPrefix("/") else { return }  // anonymous memory, the stack, the vDSO
            capture.mappings.append(.init(
                timeNs: u64(r.count - 24), pid: Int32(bitPattern: u32(8)), start: u64(16), length: u64(24),
                device: .init(major: u32(40), minor: u32(44)), inode: u64(48), path: path))
        case 14:  // PERF_RECORD_SWITCH: misc bit 13 = out; only switch-ins are kept
            guard misc & 0x2000 == 0 else { return }
            let end = r.count
            capture.switchIns.append(.init(
                timeNs: u64(end - 24), cpu: Int32(bitPattern: u32(end - 16)), tid: Int32(bitPattern: u32(end - 28))))
        case 2:  // PERF_RECORD_LOST
            capture.lostRecords += u64(16)
        case 13:  // PERF_RECORD_LOST_SAMPLES
            capture.lostRecords += u64(8)
        default:
            return
        }
    }

    private mutating func record(
        kind: Int, raw: UnsafeRawBufferPointer, pid: Int32, tid: Int32, time: UInt64, cpu: Int32, stack: [UInt64]
    ) {
        func field<T: FixedWidthInteger>(_ format: TracepointFormats.Format, _ name: String, as: T.Type) -> T {
            guard let field = format.field(name), field.offset + MemoryLayout<T>.size <= raw.count else { return 0 }
            return raw.loadUnaligned(fromByteOffset: field.offset, as: T.self)
        }
        func text(_ format: TracepointFormats.Format, _ name: String) -> String {
            guard let field = format.field(name), field.offset + field.size <= raw.count else { return "" }
            let bytes = raw[field.offset..<(field.offset + field.size)]
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        switch kind {
        case Int(LP_SCHED_FOLLOWED_SWITCH), Int(LP_SCHED_CPU_SWITCH):
            let format = formats.sched_switch
            let record = SchedulerTrace.Switch(
                timeNs: time, cpu: cpu, previousTID: field(format, "prev_pid", as: Int32.self),
                // The sample's ids are the task on the CPU: the one switching out.
                previousPID: pid, previousName: text(format, "prev_comm"),
                previousState: UInt64(bitPattern: field(format, "prev_state", as: Int64.self)),
                nextTID: field(format, "next_pid", as: Int32.self), nextName: text(format, "next_comm"))
            if kind == Int(LP_SCHED_CPU_SWITCH) {
                capture.switches.append(record)
            } else {
                var index: Int? = nil
                if !stack.isEmpty {
                    index = stackIndex[stack] ?? capture.addressStacks.count
                    if index == capture.addressStacks.count {
                        stackIndex[stack] = index
                        capture.addressStacks.append(stack)
                    }
                }
                capture.followedSwitchOuts.append(.init(record: record, stack: index))
            }
        case Int(LP_SCHED_CPU_WAKING), Int(LP_SCHED_CPU_WAKEUP_NEW):
            let format = kind == Int(LP_SCHED_CPU_WAKING) ? formats.sched_waking : formats.sched_wakeup_new
            // common_flags: TRACE_FLAG_HARDIRQ 0x08, SOFTIRQ 0x10, NMI 0x40.
            let flags = field(format, "common_flags", as: UInt8.self)
            let wakeup = SchedulerTrace.Wakeup(
                timeNs: time, cpu: cpu, wakerPID: pid, wakerTID: tid, inInterrupt: flags & 0x58 != 0,
                wakeeTID: field(format, "pid", as: Int32.self), wakeeName: text(format, "comm"))
            if kind == Int(LP_SCHED_CPU_WAKING) { capture.wakeups.append(wakeup) } else { capture.newTasks.append(wakeup) }
        case Int(LP_SCHED_FOLLOWED_PAGE_CACHE):
            guard let format = formats.pageCacheAdd else { return }
            // The kernel's dev_t: major in the top 12 bits, minor in the low 20.
            let device = field(format, "s_dev", as: UInt32.self)
            let order = format.field("order") == nil ? 0 : Int(field(format, "order", as: UInt8.self))
            capture.pageCacheAdds.append(.init(
                timeNs: time, tid: tid, device: .init(major: device >> 20, minor: device & 0xfffff),
                inode: field(format, "i_ino", as: UInt64.self), pages: 1 << min(order, 20)))
        default:
            return
        }
    }
}
