/// One record of the sampler's perf ring buffer, decoded.
public enum PerfRecord: Sendable {
    /// A stack: an on-CPU sample (every period of CPU time) or the stack at a switch-out.
    case stack(StackSample)
    /// The thread left the CPU (`out`; `preempted` when it was still runnable) or got it back.
    case switched(thread: Int32, timeNs: UInt64, out: Bool, preempted: Bool)
    /// A new mapping of a file (executable ones only).
    case mapping(timeNs: UInt64, start: UInt64, length: UInt64, fileOffset: UInt64, path: String, executable: Bool)
    /// The kernel dropped this many records (the buffer was full).
    case lost(count: UInt64)
}

extension PerfRecord {
    /// When it happened (CLOCK_MONOTONIC ns); nil for a loss report.
    public var timeNs: UInt64? {
        switch self {
        case .stack(let sample): sample.timeNs
        case .switched(_, let time, _, _), .mapping(let time, _, _, _, _, _): time
        case .lost: nil
        }
    }
}

/// The registers and stack bytes of one sample.
public struct StackSample: Sendable {
    public enum Kind: Sendable {
        case onCPU, switchOut
    }

    public var kind: Kind
    public var thread: Int32
    public var timeNs: UInt64
    /// perf's order (`LP_SAMPLE_REGISTER_COUNT`); empty when the thread was in the kernel
    /// without user registers (a kernel thread).
    public var registers: [UInt64]
    /// The bytes copied from the stack pointer up.
    public var stack: [UInt8]
    /// A switch-out's kernel return addresses, innermost first (`KernelSymbols.syscallName`).
    public var kernelFrames: [UInt64]

    public init(kind: Kind, thread: Int32, timeNs: UInt64, registers: [UInt64], stack: [UInt8], kernelFrames: [UInt64] = []) {
        self.kind = kind
        self.thread = thread
        self.timeNs = timeNs
        self.registers = registers
        self.stack = stack
        self.kernelFrames = kernelFrames
    }
}

/// Decodes the records `LaunchSampler` copies out of the ring buffer. The layout follows from
/// the events' attributes (see sampling.c): samples start with PERF_SAMPLE_IDENTIFIER, and
/// every other record ends with the sample-id trailer {pid, tid, time, identifier}.
public struct PerfRecordParser: Sendable {
    /// Event identifiers (one of each per buffer): task clock, context switches (whose samples
    /// carry a kernel call chain).
    public var clockIDs: Set<UInt64>
    public var switchIDs: Set<UInt64>
    static let registerCount = 17

    public init(clockIDs: Set<UInt64> = [], switchIDs: Set<UInt64> = []) {
        self.clockIDs = clockIDs
        self.switchIDs = switchIDs
    }

    /// Appends the records in `bytes` (whole records, back to back) to `records`.
    public func parse(_ bytes: UnsafeRawBufferPointer, into records: inout [PerfRecord]) {
        var offset = 0
        while offset + 8 <= bytes.count {
            let type = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            let misc = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            let size = Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
            guard size >= 8, offset + size <= bytes.count else { break }
            let record = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
            if let decoded = decode(type: type, misc: misc, record) { records.append(decoded) }
            offset += size
        }
    }

    private func decode(type: UInt32, misc: UInt16, _ r: UnsafeRawBufferPointer) -> PerfRecord? {
        func u64(_ at: Int) -> UInt64 { at + 8 <= r.count ? r.loadUnaligned(fromByteOffset: at, as: UInt64.self) : 0 }
        func u32(_ at: Int) -> UInt32 { at + 4 <= r.count ? r.loadUnaligned(fromByteOffset: at, as: UInt32.self) : 0 }
        switch type {
        case 9:  // PERF_RECORD_SAMPLE
            let id = u64(8)
            let thread = Int32(bitPattern: u32(20))
            let time = u64(24)
            let isClock = clockIDs.contains(id)
            guard isClock || switchIDs.contains(id) else { return nil }
            var at = 32
            var kernelFrames: [UInt64] = []
            if !isClock {
                // PERF_SAMPLE_CALLCHAIN: a count, then addresses with context markers
                // (PERF_CONTEXT_KERNEL and the like, the top 4095 values) among them.
                let count = Int(min(u64(at), UInt64(r.count / 8)))
                at += 8
                kernelFrames = (0..<count).map { u64(at + $0 * 8) }.filter { $0 < UInt64.max - 4094 }
                at += count * 8
            }
            let abi = u64(at)
            at += 8
            var registers: [UInt64] = []
            if abi != 0 {
                registers = (0..<Self.registerCount).map { u64(at + $0 * 8) }
                at += Self.registerCount * 8
            }
            // Sizes come from the kernel; clamped so that a damaged record cannot trap.
            let stackSize = Int(clamping: u64(at))
            at += 8
            var stack: [UInt8] = []
            if stackSize > 0, stackSize <= r.count, at + stackSize + 8 <= r.count {
                let used = min(Int(clamping: u64(at + stackSize)), stackSize)
                stack = Array(r[at..<(at + used)])
            }
            return .stack(StackSample(
                kind: isClock ? .onCPU : .switchOut, thread: thread, timeNs: time,
                registers: registers, stack: stack, kernelFrames: kernelFrames))
        case 14:  // PERF_RECORD_SWITCH
            let end = r.count
            return .switched(
                thread: Int32(bitPattern: u32(end - 20)), timeNs: u64(end - 16),
                out: misc & (1 << 13) != 0, preempted: misc & (1 << 14) != 0)
        case 10:  // PERF_RECORD_MMAP2
            let nameStart = 72
            guard nameStart < r.count else { return nil }
            var nameEnd = nameStart
            while nameEnd < r.count, r[nameEnd] != 0 { nameEnd += 1 }
            let path = String(decoding: r[nameStart..<nameEnd], as: UTF8.self)
            let protection = u32(64)
            return .mapping(
                timeNs: u64(r.count - 16), start: u64(16), length: u64(24), fileOffset: u64(32),
                path: path, executable: protection & 4 != 0)
        case 2:  // PERF_RECORD_LOST
            return .lost(count: u64(16))
        case 13:  // PERF_RECORD_LOST_SAMPLES
            return .lost(count: u64(8))
        default:
            return nil
        }
    }
}
