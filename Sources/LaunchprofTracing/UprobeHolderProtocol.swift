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
    /// Version 10: a drain reply carries the loss windows (when the kernel dropped hits) a
    /// process's launch overlaps, so a span a dropped hit could have ended is not measured.
    /// (9: a client says when a launch begins and ends (`launchBegins`, `launchEnded`), and the
    /// holder releases no probe while one is in flight; 8: runtime probes (`holdRuntime`: fetched arguments, return probes, SDT
    /// semaphores), their hits drained with their payloads; 7: framed binary messages, the
    /// holder a process of its own; 4–6: text protocols, the holder forked in C; 3 and before on
    /// an abstract socket.) The socket's name carries it, so holders of other versions run beside
    /// this one, unasked.
    public static let version: UInt32 = 10
    /// The largest payload either side accepts: a drain reply of `maxHitsPerProcess` hits and
    /// `maxRuntimeHitsPerProcess` runtime hits, each payload as long as allowed, and
    /// `maxLossWindowsPerProcess` loss windows.
    public static let maxPayload = hitsReplyHeaderBytes + maxHitsPerProcess * 16 + maxLossWindowsPerProcess * 24
        + maxRuntimeHitsPerProcess * (runtimeHitHeaderBytes + maxRuntimePayloadBytes)
    /// A drain reply's kind, pid, lost count, hit count, runtime hit count and loss window count.
    static let hitsReplyHeaderBytes = 1 + 4 + 8 + 4 + 4 + 4
    /// A runtime hit's tracepoint, thread, time and payload length.
    static let runtimeHitHeaderBytes = 8 + 4 + 8 + 2
    /// Hits kept and sent per watched process; a process hitting probes more often than that
    /// has the rest counted lost.
    public static let maxHitsPerProcess = 1 << 16
    /// Runtime probe hits (with payload) kept and sent per watched process: a launch makes a few
    /// hundred (two per dlopen, one per object initialised, a toolkit's few, two per import);
    /// beyond it the rest is counted lost.
    public static let maxRuntimeHitsPerProcess = 1 << 13
    /// A runtime hit's payload is cut here: the event's fixed fields (≤ 8 + 8 bytes a fetch) and
    /// the strings they point to — a file or module name; one past the cut reads as missing.
    public static let maxRuntimePayloadBytes = 320
    /// Values fetched at one runtime probe, memory reads per value, and how far from the pointer
    /// a read may go: what the runtime probe plan needs (≤ 2 values, `+8(+0(%di))`), with room.
    public static let maxFetches = 4
    public static let maxDereferences = 2
    public static let maxDereferenceOffset: Int32 = 4096
    /// Loss windows sent per process: a launch that overlaps more has its latest ones merged
    /// into one wider window (it still covers every dropped hit, only less closely).
    public static let maxLossWindowsPerProcess = 64
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
        /// Keep a runtime probe registered system-wide, its hits sampled with the values it
        /// fetches. Replied `.heldRuntime` or `.failed`.
        case holdRuntime(RuntimeDefinition)
        /// Keep `pid`'s hits from `sinceNs` (CLOCK_MONOTONIC) on, whatever else hits the probes,
        /// until they are drained. No reply.
        case watch(pid: Int32, sinceNs: UInt64)
        /// The hits of each process since its time: one `.hits` reply per process, in order.
        case drain([ProcessHits.Query])
        /// The stored hit-cost calibration: replied `.calibration`.
        case calibration
        /// Store a calibration for later clients. No reply.
        case storeCalibration(Calibration)
        /// The client is about to spawn a launch: no release may start until it says
        /// `launchEnded` (or its connection closes). Replied `.launchMayBegin` once no release
        /// is under way: a release stalls every fork and exec of the machine's processes.
        case launchBegins
        /// A launch the client began has ended (its processes are gone). No reply.
        case launchEnded
    }

    public enum Reply: Sendable, Equatable {
        case hello(version: UInt32, holderPID: Int32)
        /// The probe's tracefs event id (for `lp_tracepoint_probe_open`).
        case held(tracepoint: UInt64)
        /// A runtime probe's tracefs event id, and where each fetched value lies in its
        /// payload (in fetch order).
        case heldRuntime(tracepoint: UInt64, fields: [PayloadField])
        /// The errno of a hold that failed.
        case failed(errno: Int32)
        case hits(ProcessHits)
        case calibration(Calibration?)
        /// No release is under way, and none starts until the launch ends.
        case launchMayBegin
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

    /// A runtime probe as the holder defines it in tracefs: typed fields only, so no client
    /// text but the (checked) path reaches the kernel's parser.
    public struct RuntimeDefinition: Sendable, Equatable {
        public var path: String
        public var offset: UInt64
        /// A return probe (`r:`).
        public var isReturn: Bool
        /// The file offset of an SDT semaphore the kernel counts the probe's holders in.
        public var referenceCounter: UInt64?
        public var fetch: [FetchedArgument]
        /// As `hold`'s: a probe of the loader or libc, kept while the holder lives.
        public var lingers: Bool

        public init(path: String, offset: UInt64, isReturn: Bool, referenceCounter: UInt64?, fetch: [FetchedArgument], lingers: Bool) {
            self.path = path
            self.offset = offset
            self.isReturn = isReturn
            self.referenceCounter = referenceCounter
            self.fetch = fetch
            self.lingers = lingers
        }

        /// Its line in `uprobe_events`, the event named `name` in the `launchprof` group:
        /// `p:launchprof/NAME PATH:0xOFFSET(0xCOUNTER) a0=+0(%di):string …`.
        public func tracefsDefinition(name: String) -> String {
            var location = "\(path):0x\(String(offset, radix: 16))"
            if let referenceCounter { location += "(0x\(String(referenceCounter, radix: 16)))" }
            let arguments = fetch.enumerated().map { " a\($0.offset)=\($0.element.tracefsText)" }.joined()
            return "\(isReturn ? "r" : "p"):launchprof/\(name) \(location)\(arguments)\n"
        }
    }

    /// Where a fetched value lies in a runtime hit's payload (the event's `format`): `size` bytes
    /// at `offset`, or, for a string (`isDataLocation`), a u32 there giving the string's offset
    /// (low half) and length (high half).
    public struct PayloadField: Sendable, Equatable {
        public var offset: UInt16
        public var size: UInt16
        public var isDataLocation: Bool

        public init(offset: UInt16, size: UInt16, isDataLocation: Bool) {
            self.offset = offset
            self.size = size
            self.isDataLocation = isDataLocation
        }
    }

    /// One process's hits: each probe hit as its tracepoint id and CLOCK_MONOTONIC time, oldest
    /// first, and how many hits may be missing (the kernel's buffers were full while the process
    /// was watched, or it hit more than `maxHitsPerProcess` or `maxRuntimeHitsPerProcess`); the
    /// runtime probes' hits apart, with their thread and payload.
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

        /// A runtime probe's hit: its payload (PERF_SAMPLE_RAW, at most
        /// `maxRuntimePayloadBytes`) holds the values it fetched.
        public struct RuntimeHit: Sendable, Equatable {
            public var tracepoint: UInt64
            public var thread: Int32
            public var timeNs: UInt64
            public var payload: [UInt8]

            public init(tracepoint: UInt64, thread: Int32, timeNs: UInt64, payload: [UInt8]) {
                self.tracepoint = tracepoint
                self.thread = thread
                self.timeNs = timeNs
                self.payload = payload
            }
        }

        /// When the kernel dropped hits (a ring full) while the process was watched: `count`
        /// hits, somewhere after `beginNs` (the ring's previous record) and before `endNs` (the
        /// loss's end). Any of them may have been this process's.
        public struct LossWindow: Sendable, Equatable {
            public var beginNs: UInt64
            public var endNs: UInt64
            public var count: UInt64

            public init(beginNs: UInt64, endNs: UInt64, count: UInt64) {
                self.beginNs = beginNs
                self.endNs = endNs
                self.count = count
            }

            /// `windows` with `window` added, at most `limit` of them: beyond it the newest two
            /// merge into one that covers both.
            public static func appending(_ window: LossWindow, to windows: [LossWindow], limit: Int) -> [LossWindow] {
                var windows = windows + [window]
                while windows.count > max(1, limit) {
                    let last = windows.removeLast()
                    let previous = windows.removeLast()
                    windows.append(LossWindow(
                        beginNs: min(previous.beginNs, last.beginNs), endNs: max(previous.endNs, last.endNs),
                        count: previous.count &+ last.count))
                }
                return windows
            }
        }

        public var pid: Int32
        public var lost: UInt64
        public var hits: [Hit]
        public var runtime: [RuntimeHit]
        /// At most `maxLossWindowsPerProcess`, in the order they were read.
        public var losses: [LossWindow]

        public init(pid: Int32, lost: UInt64, hits: [Hit], runtime: [RuntimeHit] = [], losses: [LossWindow] = []) {
            self.pid = pid
            self.lost = lost
            self.hits = hits
            self.runtime = runtime
            self.losses = losses
        }
    }

    /// Why a frame was refused; the connection ends.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { "a malformed holder message: \(reason)" }
    }

    // MARK: Kinds on the wire

    private enum Kind: UInt8 {
        case hello = 1, hold, watch, drain, calibration, storeCalibration, holdRuntime, launchBegins, launchEnded
        case helloReply = 0x81, held, failed, hits, calibrationReply, heldRuntime, launchMayBegin
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
        case .holdRuntime(let definition):
            out.byte(Kind.holdRuntime.rawValue)
            out.u64(definition.offset)
            out.byte(definition.isReturn ? 1 : 0)
            out.byte(definition.lingers ? 1 : 0)
            out.byte(definition.referenceCounter == nil ? 0 : 1)
            out.u64(definition.referenceCounter ?? 0)
            out.byte(UInt8(truncatingIfNeeded: definition.fetch.count))
            for argument in definition.fetch {
                out.byte(argument.register.wire)
                out.byte(argument.kind.wire)
                out.byte(UInt8(truncatingIfNeeded: argument.dereferences.count))
                for offset in argument.dereferences { out.i32(offset) }
            }
            out.bytes(Array(definition.path.utf8))
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
        case .launchBegins:
            out.byte(Kind.launchBegins.rawValue)
        case .launchEnded:
            out.byte(Kind.launchEnded.rawValue)
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
        case .heldRuntime(let tracepoint, let fields):
            out.byte(Kind.heldRuntime.rawValue)
            out.u64(tracepoint)
            out.byte(UInt8(truncatingIfNeeded: fields.count))
            for field in fields {
                out.u16(field.offset)
                out.u16(field.size)
                out.byte(field.isDataLocation ? 1 : 0)
            }
        case .failed(let errno):
            out.byte(Kind.failed.rawValue)
            out.i32(errno)
        case .hits(let hits):
            out.byte(Kind.hits.rawValue)
            out.i32(hits.pid)
            out.u64(hits.lost)
            out.u32(UInt32(hits.hits.count))
            out.u32(UInt32(hits.runtime.count))
            out.u32(UInt32(hits.losses.count))
            for hit in hits.hits {
                out.u64(hit.tracepoint)
                out.u64(hit.timeNs)
            }
            for hit in hits.runtime {
                out.u64(hit.tracepoint)
                out.i32(hit.thread)
                out.u64(hit.timeNs)
                out.u16(UInt16(truncatingIfNeeded: hit.payload.count))
                out.bytes(hit.payload)
            }
            for window in hits.losses {
                out.u64(window.beginNs)
                out.u64(window.endNs)
                out.u64(window.count)
            }
        case .calibration(let calibration):
            out.byte(Kind.calibrationReply.rawValue)
            out.byte(calibration == nil ? 0 : 1)
            if let calibration { out.calibration(calibration) }
        case .launchMayBegin:
            out.byte(Kind.launchMayBegin.rawValue)
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
        case .holdRuntime:
            let offset = try input.u64()
            let isReturn = try input.flag("return")
            let lingers = try input.flag("linger")
            let hasCounter = try input.flag("reference counter")
            let counter = try input.u64()
            guard hasCounter || counter == 0 else { throw Malformed(reason: "a reference counter without its flag") }
            guard !hasCounter || counter > 0 else { throw Malformed(reason: "a reference counter at offset 0") }
            let count = Int(try input.byte())
            guard count <= maxFetches else { throw Malformed(reason: "\(count) fetched values (at most \(maxFetches))") }
            var fetch: [FetchedArgument] = []
            for _ in 0..<count {
                guard let register = FetchedArgument.Register(wire: try input.byte()) else { throw Malformed(reason: "an unknown register") }
                guard let kind = FetchedArgument.Kind(wire: try input.byte()) else { throw Malformed(reason: "an unknown fetch type") }
                let depth = Int(try input.byte())
                guard depth <= maxDereferences else { throw Malformed(reason: "\(depth) memory reads (at most \(maxDereferences))") }
                var dereferences: [Int32] = []
                for _ in 0..<depth {
                    let offset = try input.i32()
                    guard offset >= -maxDereferenceOffset, offset <= maxDereferenceOffset else {
                        throw Malformed(reason: "a memory read \(offset) bytes away (at most \(maxDereferenceOffset))")
                    }
                    dereferences.append(offset)
                }
                // A string is read from where a pointer points: never from a register itself.
                guard kind != .string || !dereferences.isEmpty else { throw Malformed(reason: "a string fetched from a register") }
                fetch.append(FetchedArgument(register, dereferences: dereferences, kind: kind))
            }
            let path = try input.rest()
            if let reason = pathProblem(path) { throw Malformed(reason: "a probe path that \(reason)") }
            return .holdRuntime(RuntimeDefinition(
                path: String(decoding: path, as: UTF8.self), offset: offset, isReturn: isReturn,
                referenceCounter: hasCounter ? counter : nil, fetch: fetch, lingers: lingers))
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
        case .launchBegins:
            request = .launchBegins
        case .launchEnded:
            request = .launchEnded
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
        case .heldRuntime:
            let tracepoint = try input.u64()
            let count = Int(try input.byte())
            guard count <= maxFetches else { throw Malformed(reason: "\(count) payload fields (at most \(maxFetches))") }
            var fields: [PayloadField] = []
            for _ in 0..<count {
                let field = PayloadField(offset: try input.u16(), size: try input.u16(), isDataLocation: try input.flag("data location"))
                guard Int(field.offset) + Int(field.size) <= maxRuntimePayloadBytes, field.size <= 8, field.size > 0 else {
                    throw Malformed(reason: "a payload field of \(field.size) bytes at \(field.offset)")
                }
                fields.append(field)
            }
            reply = .heldRuntime(tracepoint: tracepoint, fields: fields)
        case .failed:
            reply = .failed(errno: try input.i32())
        case .hits:
            let pid = try input.i32()
            let lost = try input.u64()
            let count = Int(try input.u32())
            let runtimeCount = Int(try input.u32())
            let lossCount = Int(try input.u32())
            guard count <= maxHitsPerProcess, runtimeCount <= maxRuntimeHitsPerProcess, lossCount <= maxLossWindowsPerProcess,
                count * 16 + runtimeCount * runtimeHitHeaderBytes + lossCount * 24 <= input.remaining
            else {
                throw Malformed(reason: "\(count) hits, \(runtimeCount) runtime hits and \(lossCount) loss windows in \(input.remaining) bytes")
            }
            var hits: [ProcessHits.Hit] = []
            hits.reserveCapacity(count)
            for _ in 0..<count { hits.append(ProcessHits.Hit(tracepoint: try input.u64(), timeNs: try input.u64())) }
            var runtime: [ProcessHits.RuntimeHit] = []
            runtime.reserveCapacity(runtimeCount)
            for _ in 0..<runtimeCount {
                let tracepoint = try input.u64()
                let thread = try input.i32()
                let time = try input.u64()
                let length = Int(try input.u16())
                guard length <= maxRuntimePayloadBytes else { throw Malformed(reason: "a payload of \(length) bytes (at most \(maxRuntimePayloadBytes))") }
                runtime.append(ProcessHits.RuntimeHit(tracepoint: tracepoint, thread: thread, timeNs: time, payload: Array(try input.take(length))))
            }
            var losses: [ProcessHits.LossWindow] = []
            losses.reserveCapacity(lossCount)
            for _ in 0..<lossCount {
                let window = ProcessHits.LossWindow(beginNs: try input.u64(), endNs: try input.u64(), count: try input.u64())
                guard window.beginNs <= window.endNs else { throw Malformed(reason: "a loss window that ends before it begins") }
                losses.append(window)
            }
            reply = .hits(ProcessHits(pid: pid, lost: lost, hits: hits, runtime: runtime, losses: losses))
        case .calibrationReply:
            switch try input.byte() {
            case 0: reply = .calibration(nil)
            case 1: reply = .calibration(try input.calibration())
            default: throw Malformed(reason: "a calibration flag that is neither 0 nor 1")
            }
        case .launchMayBegin:
            reply = .launchMayBegin
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
        mutating func u16(_ value: UInt16) {
            payload.append(UInt8(truncatingIfNeeded: value))
            payload.append(UInt8(truncatingIfNeeded: value >> 8))
        }
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

        mutating func u16() throws(Malformed) -> UInt16 { UInt16(try byte()) | UInt16(try byte()) << 8 }

        /// A byte that must be 0 or 1.
        mutating func flag(_ name: String) throws(Malformed) -> Bool {
            let value = try byte()
            guard value <= 1 else { throw Malformed(reason: "a \(name) flag of \(value)") }
            return value == 1
        }

        mutating func take(_ count: Int) throws(Malformed) -> ArraySlice<UInt8> {
            guard count <= bytes.count else { throw Malformed(reason: "a message cut short") }
            defer { bytes = bytes.dropFirst(count) }
            return bytes.prefix(count)
        }

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

/// A value the kernel reads from the probed process at a hit: a register, optionally followed
/// through memory (`+8(+0(%di))` reads the pointer at `%di`, then the word 8 bytes past it),
/// as a number or a NUL-terminated string. Typed, so no client text reaches the kernel's parser;
/// here because the holder's requests carry it (a register and a type are one byte each).
public struct FetchedArgument: Sendable, Hashable {
    public enum Register: String, Sendable, Hashable, CaseIterable {
        case ax, bx, cx, dx, si, di, bp, sp, r8, r9, r10, r11, r12, r13, r14, r15
    }

    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case u64, s32, string
    }

    public var register: Register
    /// Offsets of the memory reads, innermost first: `[0]` reads the word at the register's
    /// value, `[8, 0]` reads the pointer at `reg + 8`, then what it points to.
    public var dereferences: [Int32]
    public var kind: Kind

    public init(_ register: Register, dereferences: [Int32] = [], kind: Kind) {
        self.register = register
        self.dereferences = dereferences
        self.kind = kind
    }

    /// tracefs's spelling of it, as in `uprobe_events` (`+0(+8(%di)):string`).
    public var tracefsText: String {
        var text = "%" + register.rawValue
        for offset in dereferences { text = "\(offset >= 0 ? "+" : "")\(offset)(\(text))" }
        return text + ":" + kind.rawValue
    }
}

extension FetchedArgument.Register {
    var wire: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }
    init?(wire: UInt8) {
        guard Int(wire) < Self.allCases.count else { return nil }
        self = Self.allCases[Int(wire)]
    }
}

extension FetchedArgument.Kind {
    var wire: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }
    init?(wire: UInt8) {
        guard Int(wire) < Self.allCases.count else { return nil }
        self = Self.allCases[Int(wire)]
    }
}
