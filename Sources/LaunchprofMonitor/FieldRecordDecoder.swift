import LaunchprofReport
import LaunchprofTracing

/// Turns the kernel's raw samples into `FieldEvent`s: each perf event id has the rule for its
/// tracepoint's fields (offsets from its tracefs `format`). Pure: bytes in, events out, every
/// offset and length checked against the record — the fields of a uprobe's fetched string come
/// from another user's process, and a record that does not add up is dropped and counted.
public struct FieldRecordDecoder: Sendable {
    /// What a perf event's samples mean.
    public enum Rule: Sendable, Equatable {
        /// `sched/sched_process_exec`: the file name and the (new) pid.
        case exec(filename: TracefsEvents.Field, pid: TracefsEvents.Field)
        /// `task/task_newtask`, in the parent's context: the new task and its clone flags.
        case newTask(pid: TracefsEvents.Field, cloneFlags: TracefsEvents.Field)
        /// `signal/signal_generate`: a signal sent to `target`.
        case signal(number: TracefsEvents.Field, target: TracefsEvents.Field)
        /// A uprobe at launch boundaries (one probe can mark several).
        case boundary(program: Int?, boundaries: [Boundary])
        /// A uprobe on a hook's USDT probe; `name`: its fetched string argument.
        case hook(kind: HookEvent.Kind, name: TracefsEvents.Field?)
        /// `--all`'s one uprobe in libc (`ExecCensus.Marker`).
        case libcStart
    }

    /// The longest name a hook event keeps (the hook channel's line limit).
    public static let maximumNameBytes = 512

    private var rules: [UInt64: Rule] = [:]

    public init() {}

    public mutating func add(id: UInt64, _ rule: Rule) { rules[id] = rule }

    public var ids: Set<UInt64> { Set(rules.keys) }

    /// The event a sample means; nil for a sample of no interest (a thread's creation or exit, a
    /// signal that neither stops nor continues) or one whose fields do not fit its record
    /// (`malformed` is then true).
    public func decode(id: UInt64, pid: Int32, tid: Int32, timeNs: UInt64, raw: UnsafeRawBufferPointer) -> (event: FieldEvent?, malformed: Bool) {
        guard let rule = rules[id] else { return (nil, true) }
        switch rule {
        case .exec(let filename, let newPid):
            guard let name = string(filename, in: raw, limit: 4096), let pid = integer(newPid, in: raw) else { return (nil, true) }
            return (.execed(pid: Int32(truncatingIfNeeded: pid), filename: name, atNs: timeNs), false)
        case .newTask(let childField, let flagsField):
            guard let child = integer(childField, in: raw), let flags = integer(flagsField, in: raw) else { return (nil, true) }
            // CLONE_THREAD: a thread of `pid`, not a process.
            if flags & 0x10000 != 0 { return (nil, false) }
            return (.forked(parent: pid, child: Int32(truncatingIfNeeded: child), atNs: timeNs), false)
        case .signal(let numberField, let targetField):
            guard let number = integer(numberField, in: raw), let target = integer(targetField, in: raw) else { return (nil, true) }
            let process = Int32(truncatingIfNeeded: target)
            switch number {
            case 18: return (.continued(pid: process, atNs: timeNs), false)
            case 19, 20, 21, 22: return (.stopped(pid: process, atNs: timeNs), false)
            default: return (nil, false)
            }
        case .boundary(let program, let boundaries):
            return (.boundary(pid: pid, program: program, boundaries: boundaries, atNs: timeNs), false)
        case .libcStart:
            return (.libcStarted(pid: pid, atNs: timeNs), false)
        case .hook(let kind, let nameField):
            var name = ""
            if let nameField {
                // A name the kernel could not read (a bad pointer) arrives as "(fault)" or empty:
                // kept as the process sent it.
                guard let text = string(nameField, in: raw, limit: Self.maximumNameBytes) else { return (nil, true) }
                name = text
            }
            return (.hook(pid: pid, HookEvent(kind: kind, name: kind == .firstFrame ? "" : name, atNs: timeNs)), false)
        }
    }

    /// An integer field (1, 2, 4 or 8 bytes, little-endian; sign-extended when 4 bytes or less).
    func integer(_ field: TracefsEvents.Field, in raw: UnsafeRawBufferPointer) -> Int64? {
        guard [1, 2, 4, 8].contains(field.size), field.offset >= 0, field.offset + field.size <= raw.count else { return nil }
        var value: UInt64 = 0
        for index in 0..<field.size { value |= UInt64(raw[field.offset + index]) << (8 * UInt64(index)) }
        if field.size < 8, value & (1 << (UInt64(field.size) * 8 - 1)) != 0 {
            value |= ~((1 << (UInt64(field.size) * 8)) - 1)
        }
        return Int64(bitPattern: value)
    }

    /// A `__data_loc` string: up to its NUL, at most `limit` bytes, control characters dropped,
    /// invalid UTF-8 replaced.
    func string(_ field: TracefsEvents.Field, in raw: UnsafeRawBufferPointer, limit: Int) -> String? {
        guard field.dataLocation, field.size == 4, let location = integer(field, in: raw) else { return nil }
        let offset = Int(UInt32(truncatingIfNeeded: location) & 0xffff)
        let length = Int(UInt32(truncatingIfNeeded: location) >> 16)
        guard offset >= 0, offset + length <= raw.count else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + length])
        let text = bytes.prefix { $0 != 0 }.prefix(limit).filter { $0 >= 0x20 && $0 != 0x7f }
        return String(decoding: text, as: UTF8.self)
    }
}
