import LaunchprofReport
import Testing

@Suite("HookChannelParser")
struct HookChannelParserTests {
    func parse(_ text: String, receivedAtNs: UInt64 = 999) -> HookChannelParser.Result {
        HookChannelParser.parse(Array(text.utf8), receivedAtNs: receivedAtNs)
    }

    @Test("one line per event, several per datagram, names keep their spaces")
    func lines() {
        let result = parse("begin 100 restoreState\nextend 200 sync inbox now\nfirst-frame 300\nfinish-extend 400 sync inbox now\nend 500 restoreState\n")
        #expect(result.rejectedLines.isEmpty)
        #expect(result.events == [
            HookEvent(kind: .begin, name: "restoreState", atNs: 100),
            HookEvent(kind: .extend, name: "sync inbox now", atNs: 200),
            HookEvent(kind: .firstFrame, name: "", atNs: 300),
            HookEvent(kind: .finishExtend, name: "sync inbox now", atNs: 400),
            HookEvent(kind: .end, name: "restoreState", atNs: 500),
        ])
    }

    @Test("'-' is stamped with the receive time; a missing final newline still ends the line")
    func receiveStamp() {
        let result = parse("first-frame -", receivedAtNs: 4_242)
        #expect(result.events == [HookEvent(kind: .firstFrame, name: "", atNs: 4_242)])
        let crlf = parse("begin - shell phase\r\n", receivedAtNs: 7)
        #expect(crlf.events == [HookEvent(kind: .begin, name: "shell phase", atNs: 7)])
    }

    @Test(
        "malformed lines are rejected, the rest still parse",
        arguments: [
            "begin", "begin 12", "launch 12 x", "begin 12x name", "begin -1 name",
            "end 99999999999999999999 name", "extend 5", "finish-extend 5 ", "BEGIN 1 x", "first-frame",
        ])
    func malformed(line: String) {
        let result = parse(line + "\nfirst-frame 1\n")
        #expect(result.rejectedLines == [line])
        #expect(result.events == [HookEvent(kind: .firstFrame, name: "", atNs: 1)])
    }

    @Test("the largest UInt64 parses; blank lines are ignored; invalid UTF-8 never traps")
    func edges() {
        #expect(parse("first-frame 18446744073709551615\n\n\n").events.first?.atNs == UInt64.max)
        let bytes: [UInt8] = Array("begin 5 ".utf8) + [0xFF, 0xFE] + [0x0A]
        let result = HookChannelParser.parse(bytes, receivedAtNs: 0)
        #expect(result.events.count == 1)
        #expect(result.events.first?.atNs == 5)
    }
}
