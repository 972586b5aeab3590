import LaunchprofTracing
import Testing

/// The holder's messages (`UprobeHolderProtocol`) survive the round trip, and every byte
/// string either side may receive decodes or is refused — never a crash, never an allocation
/// beyond the protocol's bounds. The mutations here run in every test pass; Fuzz/run.sh runs
/// libFuzzer on the same decoders.
@Suite("the uprobe holder's protocol")
struct UprobeHolderProtocolTests {
    typealias P = UprobeHolderProtocol

    static let requests: [P.Request] = [
        .hello(version: P.version),
        .hold(path: "/usr/lib/x86_64-linux-gnu/libc.so.6", offset: 0x2_7fe0, scope: .systemWide, lingers: true),
        .hold(path: "/tmp/a", offset: 0, scope: .holderOnly, lingers: false),
        .holdRuntime(.init(
            path: "/usr/lib/x86_64-linux-gnu/libc.so.6", offset: 0x8_6b20, isReturn: false, referenceCounter: nil,
            fetch: [FetchedArgument(.di, dereferences: [0], kind: .string), FetchedArgument(.sp, dereferences: [0], kind: .u64)],
            lingers: true)),
        .holdRuntime(.init(
            path: "/usr/bin/python3.11", offset: 0x22_7d10, isReturn: false, referenceCounter: 0x55_4a2e,
            fetch: [FetchedArgument(.di, dereferences: [8, 0], kind: .string)], lingers: false)),
        .holdRuntime(.init(path: "/tmp/b", offset: 1, isReturn: true, referenceCounter: nil, fetch: [FetchedArgument(.ax, kind: .u64)], lingers: false)),
        .watch(pid: 4242, sinceNs: 123_456_789),
        .drain([.init(pid: 1, sinceNs: 0), .init(pid: Int32.max, sinceNs: UInt64.max)]),
        .drain([]),
        .calibration,
        .storeCalibration(.init(emulatedHitNs: 1200, steppedHitNs: 11_000, ptraceStopNs: 0)),
        .launchBegins,
        .launchEnded,
    ]

    static let replies: [P.Reply] = [
        .hello(version: P.version, holderPID: 77),
        .held(tracepoint: 2345),
        .heldRuntime(tracepoint: 2346, fields: [.init(offset: 16, size: 4, isDataLocation: true), .init(offset: 20, size: 8, isDataLocation: false)]),
        .heldRuntime(tracepoint: 2347, fields: []),
        .hits(.init(
            pid: 9, lost: 0, hits: [.init(tracepoint: 1, timeNs: 5)],
            runtime: [.init(tracepoint: 2346, thread: 10, timeNs: 7, payload: [1, 2, 3]), .init(tracepoint: 2347, thread: 9, timeNs: 8, payload: [])])),
        .failed(errno: 24),
        .hits(.init(pid: 9, lost: 3, hits: [.init(tracepoint: 1, timeNs: 5), .init(tracepoint: 2, timeNs: 6)])),
        .hits(.init(pid: 9, lost: 0, hits: [])),
        .hits(.init(
            pid: 12, lost: 9, hits: [.init(tracepoint: 1, timeNs: 5_000), .init(tracepoint: 2, timeNs: 9_000)],
            losses: [.init(beginNs: 0, endNs: 4_000, count: 2), .init(beginNs: 6_000, endNs: 6_000, count: 7)])),
        .calibration(nil),
        .calibration(.init(emulatedHitNs: 1, steppedHitNs: 2, ptraceStopNs: 3)),
        .launchMayBegin,
    ]

    private static func frames(_ bytes: [UInt8]) throws(P.Malformed) -> [ArraySlice<UInt8>] {
        var reader = P.FrameReader()
        reader.append(bytes)
        var payloads: [ArraySlice<UInt8>] = []
        while let payload = try reader.next() { payloads.append(payload) }
        return payloads
    }

    @Test func everyMessageSurvivesTheRoundTrip() throws {
        for request in Self.requests {
            let payloads = try Self.frames(P.encode(request))
            #expect(payloads.count == 1)
            #expect(try P.decodeRequest(payloads[0]) == request)
        }
        for reply in Self.replies {
            let payloads = try Self.frames(P.encode(reply))
            #expect(payloads.count == 1)
            #expect(try P.decodeReply(payloads[0]) == reply)
        }
        // Several frames in one read, and a frame split across reads.
        let stream = Self.requests.flatMap { P.encode($0) }
        var reader = P.FrameReader()
        var decoded: [P.Request] = []
        for chunk in stride(from: 0, to: stream.count, by: 7).map({ stream[$0..<min($0 + 7, stream.count)] }) {
            reader.append(chunk)
            while let payload = try reader.next() { decoded.append(try P.decodeRequest(payload)) }
        }
        #expect(decoded == Self.requests)
    }

    /// The largest reply the holder sends (a process's `maxHitsPerProcess` hits) is one the
    /// client accepts: a bound one byte short cut every spinning program's drain.
    @Test func aFullDrainReplyIsAccepted() throws {
        let hits = (0..<P.maxHitsPerProcess).map { P.ProcessHits.Hit(tracepoint: UInt64($0 % 7), timeNs: UInt64($0)) }
        let reply = P.Reply.hits(.init(pid: 31, lost: UInt64.max, hits: hits))
        let payloads = try Self.frames(P.encode(reply))
        #expect(payloads.count == 1)
        #expect(try P.decodeReply(payloads[0]) == reply)
    }

    /// The largest reply with runtime hits (`maxHitsPerProcess` hits and
    /// `maxRuntimeHitsPerProcess` runtime hits, each payload as long as kept) fits the frame bound.
    @Test func aFullDrainReplyWithPayloadsIsAccepted() throws {
        let hits = (0..<P.maxHitsPerProcess).map { P.ProcessHits.Hit(tracepoint: UInt64($0 % 7), timeNs: UInt64($0)) }
        let payload = [UInt8](repeating: 0xa5, count: P.maxRuntimePayloadBytes)
        let runtime = (0..<P.maxRuntimeHitsPerProcess).map {
            P.ProcessHits.RuntimeHit(tracepoint: UInt64($0 % 5), thread: Int32($0), timeNs: UInt64($0), payload: payload)
        }
        let losses = (0..<P.maxLossWindowsPerProcess).map {
            P.ProcessHits.LossWindow(beginNs: UInt64($0) * 10, endNs: UInt64($0) * 10 + 5, count: UInt64.max - UInt64($0))
        }
        let reply = P.Reply.hits(.init(pid: 31, lost: 1, hits: hits, runtime: runtime, losses: losses))
        let payloads = try Self.frames(P.encode(reply))
        #expect(payloads.count == 1)
        #expect(try P.decodeReply(payloads[0]) == reply)
    }

    /// Runtime definitions beyond what the probe plan needs are refused before the holder writes
    /// anything to tracefs: a string read from a register itself, too many values, too deep or
    /// too far a memory read, an unknown register or type, a counter flag that lies; and a
    /// payload or a payload field past what a hit keeps.
    @Test func runtimeDefinitionsBeyondThePlansSyntaxAreRefused() {
        func definition(_ fetch: [FetchedArgument], counter: UInt64? = nil) -> P.RuntimeDefinition {
            .init(path: "/usr/bin/python3.11", offset: 0x10, isReturn: false, referenceCounter: counter, fetch: fetch, lingers: false)
        }
        let refused: [P.RuntimeDefinition] = [
            definition([FetchedArgument(.di, kind: .string)]),
            definition(Array(repeating: FetchedArgument(.ax, kind: .u64), count: P.maxFetches + 1)),
            definition([FetchedArgument(.di, dereferences: [0, 0, 0], kind: .string)]),
            definition([FetchedArgument(.di, dereferences: [P.maxDereferenceOffset + 8], kind: .u64)]),
            definition([FetchedArgument(.di, dereferences: [-P.maxDereferenceOffset - 8], kind: .u64)]),
            definition([], counter: 0),
            .init(path: "/with space", offset: 0, isReturn: false, referenceCounter: nil, fetch: [], lingers: false),
        ]
        for request in refused {
            #expect(throws: P.Malformed.self, "\(request)") { try Self.frames(P.encode(.holdRuntime(request))).forEach { _ = try P.decodeRequest($0) } }
        }
        // Byte-level lies: the encoder cannot make these. Payload bytes after the kind: offset (8),
        // return, linger, counter flag (1 each), counter (8), fetch count, then per value its
        // register, type and depth.
        let valid = P.encode(.holdRuntime(definition([FetchedArgument(.ax, kind: .u64)])))
        let registerAt = 4 + 1 + 8 + 3 + 8 + 1
        for (index, value) in [(registerAt, UInt8(16)), (registerAt + 1, UInt8(3)), (4 + 1 + 8 + 2, UInt8(0)), (4 + 1 + 8, UInt8(2))] {
            var lying = valid
            lying[index] = value
            if index == 4 + 1 + 8 + 2 { lying[4 + 1 + 8 + 3] = 1 }  // a counter value without its flag
            #expect(throws: P.Malformed.self, "byte \(index) = \(value)") { try Self.frames(lying).forEach { _ = try P.decodeRequest($0) } }
        }
        // A runtime hit's payload longer than a hit keeps, and a field past it.
        var long = P.encode(P.Reply.hits(.init(pid: 1, lost: 0, hits: [], runtime: [.init(tracepoint: 1, thread: 1, timeNs: 1, payload: [7])])))
        let lengthAt = 4 + (1 + 4 + 8 + 4 + 4 + 4) + 8 + 4 + 8  // the frame's length, the reply's header (with its loss window count), the hit's tracepoint, thread and time
        long[lengthAt] = UInt8(truncatingIfNeeded: P.maxRuntimePayloadBytes + 1)
        long[lengthAt + 1] = UInt8((P.maxRuntimePayloadBytes + 1) >> 8)
        #expect(throws: P.Malformed.self) { try Self.frames(long).forEach { _ = try P.decodeReply($0) } }
        let field = P.encode(P.Reply.heldRuntime(tracepoint: 1, fields: [.init(offset: UInt16(P.maxRuntimePayloadBytes - 4), size: 8, isDataLocation: false)]))
        #expect(throws: P.Malformed.self) { try Self.frames(field).forEach { _ = try P.decodeReply($0) } }
    }

    /// A runtime definition's tracefs line is made from its typed fields: the entry or return,
    /// the SDT semaphore as reference counter, each value as `aN=`.
    @Test func aRuntimeDefinitionsTracefsLine() {
        let entry = P.RuntimeDefinition(
            path: "/usr/bin/python3.11", offset: 0x22_7d10, isReturn: false, referenceCounter: 0x55_4a2e,
            fetch: [FetchedArgument(.di, dereferences: [8, 0], kind: .string)], lingers: false)
        #expect(entry.tracefsDefinition(name: "lpe_1") == "p:launchprof/lpe_1 /usr/bin/python3.11:0x227d10(0x554a2e) a0=+0(+8(%di)):string\n")
        let exit = P.RuntimeDefinition(path: "/lib/libc.so.6", offset: 0x10, isReturn: true, referenceCounter: nil, fetch: [FetchedArgument(.ax, kind: .u64)], lingers: true)
        #expect(exit.tracefsDefinition(name: "lpr_2") == "r:launchprof/lpr_2 /lib/libc.so.6:0x10 a0=%ax:u64\n")
    }

    /// Paths the holder would hand to tracefs are refused before they reach it.
    @Test func aProbePathTracefsWouldMisreadIsRefused() {
        for path in ["relative/lib.so", "/with space", "/tab\there", "/new\nline", "/nul\u{0}byte", "/" + String(repeating: "a", count: 2000), ""] {
            let frame = P.encode(.hold(path: path, offset: 0, scope: .systemWide, lingers: false))
            #expect(throws: P.Malformed.self, "\(path.prefix(20))") { try Self.frames(frame).forEach { _ = try P.decodeRequest($0) } }
        }
    }

    /// A frame announcing more than the protocol allows is refused from its length alone,
    /// before its bytes arrive (nothing is allocated for it).
    @Test func anOversizedFrameIsRefusedFromItsLength() {
        var reader = P.FrameReader()
        reader.append([0xff, 0xff, 0xff, 0x7f, 1])
        #expect(throws: P.Malformed.self) { _ = try reader.next() }
        var empty = P.FrameReader()
        empty.append([0, 0, 0, 0])
        #expect(throws: P.Malformed.self) { _ = try empty.next() }
        // A hits reply claiming more hits than it carries.
        var lying = P.encode(P.Reply.hits(.init(pid: 1, lost: 0, hits: [.init(tracepoint: 1, timeNs: 1)])))
        lying[4 + 1 + 4 + 8] = 0xff
        #expect(throws: P.Malformed.self) { try Self.frames(lying).forEach { _ = try P.decodeReply($0) } }
    }

    /// Loss windows are bounded, carried whole, and each one ends after it begins.
    @Test func lossWindowsBeyondTheirBoundsAreRefused() throws {
        let window = P.ProcessHits.LossWindow(beginNs: 10, endNs: 20, count: 3)
        let one = P.encode(P.Reply.hits(.init(pid: 1, lost: 3, hits: [], losses: [window])))
        let countAt = 4 + 1 + 4 + 8 + 4 + 4
        #expect(try Self.frames(one).map { try P.decodeReply($0) } == [.hits(.init(pid: 1, lost: 3, hits: [], losses: [window]))])
        // One window more than the bound, claimed without its bytes and with them.
        var tooMany = one
        tooMany[countAt] = UInt8(P.maxLossWindowsPerProcess + 1)
        #expect(throws: P.Malformed.self) { try Self.frames(tooMany).forEach { _ = try P.decodeReply($0) } }
        let overBound = P.encode(P.Reply.hits(.init(
            pid: 1, lost: 0, hits: [], losses: Array(repeating: window, count: P.maxLossWindowsPerProcess + 1))))
        #expect(throws: P.Malformed.self) { try Self.frames(overBound).forEach { _ = try P.decodeReply($0) } }
        // Two windows claimed, one carried.
        var short = one
        short[countAt] = 2
        #expect(throws: P.Malformed.self) { try Self.frames(short).forEach { _ = try P.decodeReply($0) } }
        // A window that ends before it begins.
        let backwards = P.encode(P.Reply.hits(.init(pid: 1, lost: 3, hits: [], losses: [.init(beginNs: 21, endNs: 20, count: 3)])))
        #expect(throws: P.Malformed.self) { try Self.frames(backwards).forEach { _ = try P.decodeReply($0) } }
    }

    /// The holder keeps a process's windows within the bound by merging the newest: the merged
    /// window covers both, with both counts.
    @Test func lossWindowsPastTheBoundMergeIntoOneThatCoversThem() {
        var windows: [P.ProcessHits.LossWindow] = []
        for number in 0..<5 {
            windows = P.ProcessHits.LossWindow.appending(
                .init(beginNs: UInt64(number) * 100, endNs: UInt64(number) * 100 + 10, count: UInt64(number + 1)), to: windows, limit: 3)
        }
        #expect(windows == [
            .init(beginNs: 0, endNs: 10, count: 1), .init(beginNs: 100, endNs: 110, count: 2),
            .init(beginNs: 200, endNs: 410, count: 3 + 4 + 5),
        ])
    }

    /// Every truncation of every message, and 20,000 seeded mutations (flipped, inserted,
    /// removed bytes; lengths rewritten), decode or are refused by both decoders.
    @Test func mutatedMessagesDecodeOrAreRefused() {
        var generator = SeededGenerator(seed: 33)
        let valid = Self.requests.map { P.encode($0) } + Self.replies.map { P.encode($0) }
        var inputs: [[UInt8]] = []
        for frame in valid { for length in 0..<frame.count { inputs.append(Array(frame[..<length])) } }
        for _ in 0..<20_000 {
            var bytes = valid.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                case 2: if bytes.count > 1 { bytes.remove(at: index) }
                default:
                    // A length consistent with the mutated payload, so the payload decoders see it.
                    guard bytes.count >= 4 else { continue }
                    let length = UInt32(bytes.count - 4)
                    bytes.replaceSubrange(0..<4, with: [UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16 & 0xff), UInt8(length >> 24)])
                }
            }
            inputs.append(bytes)
        }
        var decoded = 0
        var refused = 0
        for input in inputs {
            do {
                for payload in try Self.frames(input) {
                    if (try? P.decodeRequest(payload)) != nil { decoded += 1 } else { refused += 1 }
                    if (try? P.decodeReply(payload)) != nil { decoded += 1 } else { refused += 1 }
                }
            } catch {
                refused += 1
            }
        }
        #expect(decoded > 0 && refused > 0, "\(decoded) decoded, \(refused) refused of \(inputs.count) inputs")
    }
}
