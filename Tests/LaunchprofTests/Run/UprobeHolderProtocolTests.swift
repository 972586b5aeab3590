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
        .watch(pid: 4242, sinceNs: 123_456_789),
        .drain([.init(pid: 1, sinceNs: 0), .init(pid: Int32.max, sinceNs: UInt64.max)]),
        .drain([]),
        .calibration,
        .storeCalibration(.init(emulatedHitNs: 1200, steppedHitNs: 11_000, ptraceStopNs: 0)),
    ]

    static let replies: [P.Reply] = [
        .hello(version: P.version, holderPID: 77),
        .held(tracepoint: 2345),
        .failed(errno: 24),
        .hits(.init(pid: 9, lost: 3, hits: [.init(tracepoint: 1, timeNs: 5), .init(tracepoint: 2, timeNs: 6)])),
        .hits(.init(pid: 9, lost: 0, hits: [])),
        .calibration(nil),
        .calibration(.init(emulatedHitNs: 1, steppedHitNs: 2, ptraceStopNs: 3)),
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
