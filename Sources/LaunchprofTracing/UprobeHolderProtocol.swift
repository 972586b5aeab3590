/// What a launchprof process and its uprobe holder say to each other, both directions, in one
/// place: each message's fields, its encoding and its decoding.
///
/// A message is a frame: a little-endian UInt32 payload length, then the payload, whose first
/// byte is the message's kind. Each side decodes what it receives as untrusted input: a frame
/// longer than `maxPayload`, an unknown kind, a field that runs past the payload, bytes left over,
/// a count beyond its bound or a path the holder would not accept ends the connection
/// (`Malformed`), never a crash or an unbounded allocation. Standard library only, so the fuzzer
/// (Fuzz/run.sh) compiles this file on its own.
public enum UprobeHolderProtocol {
    /// Version 7: framed binary messages, the holder a process of its own (exec'd launchprof).
    /// (4–6: text protocols, the holder forked in C; 3 and before on an abstract socket.) The
    /// socket's name carries it, so holders of other versions run beside this one, unasked.
    public static let version: UInt32 = 7
    /// The largest payload either side accepts: a drain reply of `maxHitsPerProcess` hits.
    public static let maxPayload = hitsReplyHeaderBytes + maxHitsPerProcess * 16
    /// A drain reply's kind, pid, lost count and hit count.
    static let hitsReplyHeaderBytes = 1 + 4 + 8 + 4
    /// Hits kept and sent per watched process; a process hitting probes more often than that
    /// has the rest counted lost.
    public static let maxHitsPerProcess = 1 << 16
    /// Processes in one drain request.
    public static let maxDrainBatch = 256
    /// A probed file's path: absolute, printable, no white space (tracefs's syntax), at most this long.
    public static let maxPathBytes = 1024

    /// Who a held probe traps in.
    public enum Scope: UInt8, Sendable, Equatable {
        /// Every process mapping the file: a launch boundary.
        case systemWide = 1
        /// The holder only (the registration is kept; the client opens its own event on it): a
        /// function launchprof probes in itself to measure a hit's cost.
        case holderOnly = 2
    }

    public enum Request: Sendable, Equatable {
        /// The first message: the client's protocol version.
        case hello(version: UInt32)
        /// Keep a probe at `path` + `offset`. `lingers`: a probe of a file every process maps
        /// (the loader's, libc's), kept while the holder lives; otherwise released once no
        /// client holds it for the linger. Replied `.held` or `.failed`.
        case hold(path: String, offset: UInt64, scope: Scope, lingers: Bool)
        /// Keep `pid`'s hits from `sinceNs` (CLOCK_MONOTONIC) on, whatever else hits the probes,
        /// until they are drained. No reply.
        case watch(pid: Int32, sinceNs: UInt64)
        /// The hits of each process since its time: one `.hits` reply per process, in order.
        case drain([ProcessHits.Query])
        /// The stored hit-cost calibration: replied `.calibration`.
        case calibration
        /// Store a calibration for later clients. No reply.
        case storeCalibration(Calibration)
    }

    public enum Reply: Sendable, Equatable {
        case hello(version: UInt32, holderPID: Int32)
        /// The probe's tracefs event id (for `lp_tracepoint_probe_open`).
        case held(tracepoint: UInt64)
        /// The errno of a hold that failed.
        case failed(errno: Int32)
        case hits(ProcessHits)
        case calibration(Calibration?)
    }

    public struct Calibration: Sendable, Equatable {
        public var emulatedHitNs: UInt64
        public var steppedHitNs: UInt64
        /// 0: not measured.
        public var ptraceStopNs: UInt64

        public init(emulatedHitNs: UInt64, steppedHitNs: UInt64, ptraceStopNs: UInt64) {
            self.emulatedHitNs = emulatedHitNs
            self.steppedHitNs = steppedHitNs
            self.ptraceStopNs = ptraceStopNs
        }
    }

    /// One process's hits: each probe hit as its tracepoint id and CLOCK_MONOTONIC time, oldest
    /// first, and how many hits may be missing (the kernel's buffers were full while the process
    /// was watched, or it hit more than `maxHitsPerProcess`).
    public struct ProcessHits: Sendable, Equatable {
        public struct Query: Sendable, Equatable {
            public var pid: Int32
            public var sinceNs: UInt64

            public init(pid: Int32, sinceNs: UInt64) {
                self.pid = pid
                self.sinceNs = sinceNs
            }
        }

        public struct Hit: Sendable, Equatable {
            public var tracepoint: UInt64
            public var timeNs: UInt64

            public init(tracepoint: UInt64, timeNs: UInt64) {
                self.tracepoint = tracepoint
                self.timeNs = timeNs
            }
        }

        public var pid: Int32
        public var lost: UInt64
        public var hits: [Hit]

        public init(pid: Int32, lost: UInt64, hits: [Hit]) {
            self.pid = pid
            self.lost = lost
            self.hits = hits
        }
    }

    /// Why a frame was refused; the connection ends.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { "a malformed holder message: \(reason)" }
    }

    // MARK: Kinds on the wire

    private enum Kind: UInt8 {
        case hello = 1, hold, watch, drain, calibration, storeCalibration
        case helloReply = 0x81, held, failed, hits, calibrationReply
    }

    // MARK: Encoding

    public static func encode(_ request: Request) -> [UInt8] {
        var out = Writer()
        switch request {
        case .hello(let version):
            out.byte(Kind.hello.rawValue)
            out.u32(version)
        case .hold(let path, let offset, let scope, let lingers):
            out.byte(Kind.hold.rawValue)
            out.u64(offset)
            out.byte(scope.rawValue)
            out.byte(lingers ? 1 : 0)
            out.bytes(Array(path.utf8))
        case .watch(let pid, let since):
            out.byte(Kind.watch.rawValue)
            out.i32(pid)
            out.u64(since)
        case .drain(let queries):
            out.byte(Kind.drain.rawValue)
            out.u32(UInt32(queries.count))
            for query in queries {
                out.i32(query.pid)
                out.u64(query.sinceNs)
            }
        case .calibration:
            out.byte(Kind.calibration.rawValue)
        case .storeCalibration(let calibration):
            out.byte(Kind.storeCalibration.rawValue)
            out.calibration(calibration)
        }
        return out.framed()
    }

    public static func encode(_ reply: Reply) -> [UInt8] {
        var out = Writer()
        switch reply {
        case .hello(let version, let pid):
            out.byte(Kind.helloReply.rawValue)
            out.u32(version)
            out.i32(pid)
        case .held(let tracepoint):
            out.byte(Kind.held.rawValue)
            out.u64(tracepoint)
        case .failed(let errno):
            out.byte(Kind.failed.rawValue)
            out.i32(errno)
        case .hits(let hits):
            out.byte(Kind.hits.rawValue)
            out.i32(hits.pid)
            out.u64(hits.lost)
            out.u32(UInt32(hits.hits.count))
            for hit in hits.hits {
                out.u64(hit.tracepoint)
                out.u64(hit.timeNs)
            }
        case .calibration(let calibration):
            out.byte(Kind.calibrationReply.rawValue)
            out.byte(calibration == nil ? 0 : 1)
            if let calibration { out.calibration(calibration) }
        }
        return out.framed()
    }

    // MARK: Decoding

    /// Collects received bytes and hands out whole payloads.
    public struct FrameReader: Sendable {
        private var buffer: [UInt8] = []
        private var start = 0

        public init() {}

        public mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

        /// Bytes received and not yet handed out as frames.
        public var pendingBytes: Int { buffer.count - start }

        /// The next whole payload; nil until one has arrived.
        public mutating func next() throws(Malformed) -> ArraySlice<UInt8>? {
            guard buffer.count - start >= 4 else { return nil }
            let length = Int(buffer[start]) | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2]) << 16 | Int(buffer[start + 3]) << 24
            guard length >= 1, length <= UprobeHolderProtocol.maxPayload else {
                throw Malformed(reason: "a frame of \(length) bytes (1 to \(UprobeHolderProtocol.maxPayload) allowed)")
            }
            guard buffer.count - start - 4 >= length else { return nil }
            let payload = buffer[(start + 4)..<(start + 4 + length)]
            start += 4 + length
            if start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 1 << 16 {
                buffer.removeFirst(start)
                start = 0
            }
            return ArraySlice(payload)
        }
    }

    public static func decodeRequest(_ payload: ArraySlice<UInt8>) throws(Malformed) -> Request {
        var input = Reader(payload)
        let kind = try input.byte()
        let request: Request
        switch Kind(rawValue: kind) {
        case .hello:
            request = .hello(version: try input.u32())
        case .hold:
            let offset = try input.u64()
            guard let scope = Scope(rawValue: try input.byte()) else { throw Malformed(reason: "an unknown probe scope") }
            let lingers = try input.byte()
            guard lingers <= 1 else { throw Malformed(reason: "a linger flag of \(lingers)") }
            let path = try input.rest()
            guard let reason = pathProblem(path) else {
                return .hold(path: String(decoding: path, as: UTF8.self), offset: offset, scope: scope, lingers: lingers == 1)
            }
            throw Malformed(reason: "a probe path that \(reason)")
        case .watch:
            request = .watch(pid: try input.i32(), sinceNs: try input.u64())
        case .drain:
            let count = Int(try input.u32())
            guard count <= maxDrainBatch else { throw Malformed(reason: "a drain of \(count) processes (at most \(maxDrainBatch))") }
            var queries: [ProcessHits.Query] = []
            queries.reserveCapacity(count)
            for _ in 0..<count { queries.append(ProcessHits.Query(pid: try input.i32(), sinceNs: try input.u64())) }
            request = .drain(queries)
        case .calibration:
            request = .calibration
        case .storeCalibration:
            request = .storeCalibration(try input.calibration())
        default:
            throw Malformed(reason: "an unknown request kind \(kind)")
        }
        try input.end()
        return request
    }

    public static func decodeReply(_ payload: ArraySlice<UInt8>) throws(Malformed) -> Reply {
        var input = Reader(payload)
        let kind = try input.byte()
        let reply: Reply
        switch Kind(rawValue: kind) {
        case .helloReply:
            reply = .hello(version: try input.u32(), holderPID: try input.i32())
        case .held:
            reply = .held(tracepoint: try input.u64())
        case .failed:
            reply = .failed(errno: try input.i32())
        case .hits:
            let pid = try input.i32()
            let lost = try input.u64()
            let count = Int(try input.u32())
            guard count <= maxHitsPerProcess, count * 16 == input.remaining else {
                throw Malformed(reason: "\(count) hits in \(input.remaining) bytes")
            }
            var hits: [ProcessHits.Hit] = []
            hits.reserveCapacity(count)
            for _ in 0..<count { hits.append(ProcessHits.Hit(tracepoint: try input.u64(), timeNs: try input.u64())) }
            reply = .hits(ProcessHits(pid: pid, lost: lost, hits: hits))
        case .calibrationReply:
            switch try input.byte() {
            case 0: reply = .calibration(nil)
            case 1: reply = .calibration(try input.calibration())
            default: throw Malformed(reason: "a calibration flag that is neither 0 nor 1")
            }
        default:
            throw Malformed(reason: "an unknown reply kind \(kind)")
        }
        try input.end()
        return reply
    }

    /// Why the holder would not probe this path, or nil: tracefs reads a definition up to white
    /// space, so only an absolute path of printable bytes without it is accepted.
    public static func pathProblem(_ path: some Collection<UInt8>) -> String? {
        guard path.first == UInt8(ascii: "/") else { return "is not absolute" }
        guard path.count <= maxPathBytes else { return "is longer than \(maxPathBytes) bytes" }
        guard path.allSatisfy({ $0 > 0x20 && $0 != 0x7f }) else { return "holds white space or control characters" }
        guard String(validating: path, as: UTF8.self) != nil else { return "is not UTF-8" }
        return nil
    }

    // MARK: Bytes

    private struct Writer {
        var payload: [UInt8] = []

        mutating func byte(_ value: UInt8) { payload.append(value) }
        mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { payload.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
        mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }
        mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { payload.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
        mutating func bytes(_ value: [UInt8]) { payload += value }
        mutating func calibration(_ value: Calibration) {
            u64(value.emulatedHitNs)
            u64(value.steppedHitNs)
            u64(value.ptraceStopNs)
        }

        func framed() -> [UInt8] {
            let length = UInt32(payload.count)
            return [UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8),
                    UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 24)] + payload
        }
    }

    private struct Reader {
        private var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        var remaining: Int { bytes.count }

        mutating func byte() throws(Malformed) -> UInt8 {
            guard let first = bytes.first else { throw Malformed(reason: "a message cut short") }
            bytes = bytes.dropFirst()
            return first
        }

        mutating func u32() throws(Malformed) -> UInt32 {
            var value: UInt32 = 0
            for shift in stride(from: 0, to: 32, by: 8) { value |= UInt32(try byte()) << UInt32(shift) }
            return value
        }

        mutating func i32() throws(Malformed) -> Int32 { Int32(bitPattern: try u32()) }

        mutating func u64() throws(Malformed) -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(try byte()) << UInt64(shift) }
            return value
        }

        mutating func calibration() throws(Malformed) -> Calibration {
            Calibration(emulatedHitNs: try u64(), steppedHitNs: try u64(), ptraceStopNs: try u64())
        }

        mutating func rest() throws(Malformed) -> ArraySlice<UInt8> {
            defer { bytes = bytes[bytes.endIndex...] }
            return bytes
        }

        func end() throws(Malformed) {
            guard bytes.isEmpty else { throw Malformed(reason: "\(bytes.count) byte(s) after the message") }
        }
    }
}
