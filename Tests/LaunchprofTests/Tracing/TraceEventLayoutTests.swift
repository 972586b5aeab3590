import Testing

@testable import LaunchprofTracing

/// A tracefs event's raw sample decoded by its format file, with every offset checked.
@Suite("Trace event layout")
struct TraceEventLayoutTests {
    /// The format tracefs gives `p:launchprof/x FILE:0xOFF a0=+0(%di):string a1=+0(%sp):u64`.
    static let format = """
        name: x
        ID: 2707
        format:
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
        \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

        \tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;
        \tfield:__data_loc char[] a0;\toffset:16;\tsize:4;\tsigned:1;
        \tfield:u64 a1;\toffset:20;\tsize:8;\tsigned:0;

        print fmt: "(%lx) a0=\\"%s\\" a1=0x%Lx", REC->__probe_ip, __get_str(a0), REC->a1
        """

    static let fetch = [FetchedArgument(.di, dereferences: [0], kind: .string), FetchedArgument(.sp, dereferences: [0], kind: .u64)]

    private func raw(string: String, location: UInt32? = nil, word: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 28)
        let text = Array(string.utf8) + [0]
        let loc = location ?? (UInt32(text.count) << 16 | 28)
        for i in 0..<4 { bytes[16 + i] = UInt8(truncatingIfNeeded: loc >> (8 * UInt32(i))) }
        for i in 0..<8 { bytes[20 + i] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(i))) }
        return bytes + text
    }

    @Test func fieldsComeFromTheFormatFile() throws {
        let layout = try #require(TraceEventLayout(format: Self.format))
        #expect(layout.fields.map(\.name) == ["common_type", "common_flags", "common_preempt_count", "common_pid", "__probe_ip", "a0", "a1"])
        #expect(layout.fields.last == .init(name: "a1", offset: 20, size: 8, isDataLocation: false))
        #expect(layout.fields[5].isDataLocation && layout.fields[5].offset == 16)
        #expect(TraceEventLayout(format: "name: x\nprint fmt: \"\"") == nil)
    }

    @Test func aStringAndAWordAreDecoded() throws {
        let layout = try #require(TraceEventLayout(format: Self.format))
        #expect(layout.values(raw(string: "libspin.so", word: 0x5555_1234), fetch: Self.fetch) == [.string("libspin.so"), .integer(0x5555_1234)])
    }

    @Test func whatDoesNotFitIsNilNeverACrash() throws {
        let layout = try #require(TraceEventLayout(format: Self.format))
        // A data location past the end, a length of 0, a sample cut short.
        #expect(layout.values(raw(string: "x", location: 200 << 16 | 28, word: 1), fetch: Self.fetch) == [nil, .integer(1)])
        #expect(layout.values(raw(string: "x", location: 28, word: 1), fetch: Self.fetch) == [nil, .integer(1)])
        #expect(layout.values(Array(raw(string: "x", word: 1).prefix(18)), fetch: Self.fetch) == [nil, nil])
        #expect(layout.values([], fetch: Self.fetch) == [nil, nil])
    }
}
