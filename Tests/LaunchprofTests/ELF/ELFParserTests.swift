import Foundation
import Testing

@testable import LaunchprofELF

/// launchprof's own byte parsers on hand-made tables whose meaning is fixed by the ELF and
/// glibc specifications.
@Suite("ELF: byte parsers")
struct ELFParserTests {
    static func words(_ values: [UInt64]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    }

    @Test("DT_RELR: an address word, then bitmaps of the following 63 words each")
    func relr() throws {
        // 0x1000 relocates 0x1000; the bitmap 0b1011 (after the marker bit) relocates 0x1008
        // and 0x1018 and 0x1020; a second bitmap covers the next 63 words: bit 63 → 63rd word.
        let table = Self.words([0x1000, (0b1101 << 1) | 1, (1 << 63) | 1])
        let result = try table.withUnsafeBytes { raw in try RelocationTableParser.countRELR(ByteView(raw)) }
        #expect(result.count == 1 + 3 + 1)
        #expect(result.firstAddress == 0x1000)
        let empty = try [UInt8]().withUnsafeBytes { try RelocationTableParser.countRELR(ByteView($0)) }
        #expect(empty.count == 0 && empty.firstAddress == nil)
    }

    @Test("RELA entries are counted by type; the PLT part of DT_RELASZ is skipped")
    func rela() throws {
        // r_offset, r_info (type in the low 32 bits), r_addend.
        let types: [UInt64] = [8, 8, 6, 1, 7, 16, 5, 37, 2, 7]
        let table = Self.words(types.enumerated().flatMap { [UInt64($0.offset * 8), $0.element, 0] })
        var counts = RelocationCounts()
        try table.withUnsafeBytes { raw in
            try RelocationTableParser.count(ByteView(raw), entrySize: 24, into: &counts, skipping: 9 * 24..<10 * 24)
        }
        #expect(counts.relative == 2)
        #expect(counts.symbolic == 2)
        #expect(counts.jumpSlot == 1)  // the last JUMP_SLOT lies in the skipped range
        #expect(counts.tls == 1)
        #expect(counts.copy == 1)
        #expect(counts.irelative == 1)
        #expect(counts.other == 1)
        #expect(table.withUnsafeBytes { RelocationTableParser.firstTarget(ByteView($0)) } == 0)
        // DT_RELACOUNT's leading entries count as relative unread, as glibc applies them.
        var withCount = RelocationCounts()
        try table.withUnsafeBytes { raw in
            try RelocationTableParser.count(ByteView(raw), entrySize: 24, into: &withCount, leadingRelative: 3)
        }
        #expect(withCount.relative == 3)
        #expect(withCount.symbolic == 1)
        #expect(withCount.total == types.count)
    }

    @Test("DT_RPATH is ignored when DT_RUNPATH is present; strings resolve through DT_STRTAB")
    func rpathAndRunpath() throws {
        let strings = Array("\0/rpath/dir\0/runpath/dir\0libx.so.1\0".utf8)
        // DT_RPATH=1, DT_RUNPATH=12, DT_NEEDED=25, DT_STRTAB=0 (mapped below), DT_FLAGS_1=PIE|NOW.
        let dynamic = Self.words([15, 1, 29, 12, 1, 25, 5, 0, 0x6fff_fffb, 0x0800_0001, 0, 0])
        let info = try dynamic.withUnsafeBytes { dynamicRaw in
            try strings.withUnsafeBytes { stringsRaw in
                try DynamicSectionParser.parse(ByteView(dynamicRaw)) { _ in ByteView(stringsRaw) }
            }
        }
        #expect(info.rpath == "/rpath/dir")
        #expect(info.runpath == "/runpath/dir")
        #expect(info.effectiveRPath == nil)
        #expect(info.needed == ["libx.so.1"])
        #expect(info.isPIE)
        #expect(info.bindNow)
    }

    @Test("build-id notes, 4- and 8-aligned, after other notes")
    func buildIDNotes() throws {
        func note(type: UInt32, name: String, desc: [UInt8], align: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            let nameBytes = Array(name.utf8) + [0]
            for value in [UInt32(nameBytes.count), UInt32(desc.count), type] {
                withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
            }
            bytes += nameBytes
            while bytes.count % align != 0 { bytes.append(0) }
            bytes += desc
            while bytes.count % align != 0 { bytes.append(0) }
            return bytes
        }
        for align in [4, 8] {
            let notes = note(type: 5, name: "GNU", desc: [1, 2, 3, 4, 5, 6, 7, 8], align: align)
                + note(type: 3, name: "GNU", desc: [0xde, 0xad, 0xbe, 0xef, 0x01], align: align)
            let id = try notes.withUnsafeBytes { try NoteParser.buildID(in: ByteView($0), alignment: UInt64(align)) }
            #expect(id == "deadbeef01")
        }
        let truncated = note(type: 3, name: "GNU", desc: [1, 2, 3, 4], align: 4).dropLast(3)
        #expect(throws: ELFError.self) {
            try Array(truncated).withUnsafeBytes { try NoteParser.buildID(in: ByteView($0), alignment: 4) }
        }
    }

    @Test("glibc's library order compares digit runs as numbers")
    func libraryCompare() {
        func compare(_ a: String, _ b: String) -> Int {
            Array((b + "\0").utf8).withUnsafeBytes { LoaderCache.libraryCompare(Array(a.utf8), $0) }
        }
        #expect(compare("libc.so.6", "libc.so.6") == 0)
        #expect(compare("libfoo.so.10", "libfoo.so.9") > 0)
        #expect(compare("libfoo.so.9", "libfoo.so.10") < 0)
        #expect(compare("liba.so", "libb.so") < 0)
        #expect(compare("lib1.so", "liba.so") > 0)
    }
}
