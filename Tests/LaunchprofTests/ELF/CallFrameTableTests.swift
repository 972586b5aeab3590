import Foundation
import LaunchprofELF
import Testing

@testable import LaunchprofCore

/// launchprof's call frame interpreter against binutils' (`readelf --debug-dump=frames-interp`
/// prints every row of every FDE), and fuzzed: damaged `.eh_frame` and `.eh_frame_hdr` bytes
/// give a rule, nil or an `ELFError`, never a crash.
@Suite("ELF: call frame information")
struct CallFrameTableTests {
    /// One row of readelf's table: from `start` to `end` (exclusive), the CFA and the rules of
    /// the columns it lists (DWARF numbers; 16 is `ra`).
    struct OracleRow {
        var start: UInt64
        var end: UInt64
        var frameAddress: String
        var columns: [(register: Int, text: String)]
    }

    static let registerNumbers: [String: Int] = {
        var numbers = ["rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7, "ra": 16]
        for index in 8...15 { numbers["r\(index)"] = index }
        return numbers
    }()

    /// readelf's rows of every FDE (an FDE without instructions has the CIE's row).
    static func oracle(_ path: String) throws -> [OracleRow] {
        let output = try InspectTruth.run("/usr/bin/readelf", ["--debug-dump=frames-interp", path]).stdout
        var rows: [OracleRow] = []
        var cieRows: [String: (String, [(Int, String)])] = [:]
        var header: [String] = []
        var block: (isCIE: Bool, offset: String, cie: String, start: UInt64, end: UInt64)?
        var pending: [(UInt64, String, [(Int, String)])] = []
        func flush() {
            guard let current = block else { return }
            if current.isCIE {
                if let last = pending.last { cieRows[current.offset] = (last.1, last.2) }
            } else {
                if pending.isEmpty, let row = cieRows[current.cie] { pending = [(current.start, row.0, row.1)] }
                for (index, row) in pending.enumerated() {
                    let end = index + 1 < pending.count ? pending[index + 1].0 : current.end
                    if row.0 < end { rows.append(OracleRow(start: row.0, end: end, frameAddress: row.1, columns: row.2)) }
                }
            }
            pending = []
            block = nil
        }
        for line in output.split(separator: "\n") {
            if line.hasSuffix("ZERO terminator") {
                flush()
                continue
            }
            // A register saved in another prints as "r9 (r9)": one field.
            var fields: [Substring] = []
            for field in line.split(separator: " ") {
                if field.hasPrefix("("), !fields.isEmpty { continue }
                fields.append(field)
            }
            if fields.count >= 4, fields[3] == "CIE" {
                flush()
                block = (true, String(fields[0]), "", 0, 0)
            } else if fields.count >= 6, fields[3] == "FDE", fields[4].hasPrefix("cie="), fields[5].hasPrefix("pc=") {
                flush()
                let range = fields[5].dropFirst(3).split(separator: ".", omittingEmptySubsequences: true)
                guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16) else { continue }
                block = (false, String(fields[0]), String(fields[4].dropFirst(4)), start, end)
            } else if fields.first == "LOC" {
                header = fields.dropFirst(2).map(String.init)
            } else if block != nil, fields.count == header.count + 2, let location = UInt64(fields[0], radix: 16) {
                var columns: [(Int, String)] = []
                for (name, text) in zip(header, fields.dropFirst(2)) {
                    if let number = registerNumbers[name] { columns.append((number, String(text))) }
                }
                pending.append((location, String(fields[1]), columns))
            }
        }
        flush()
        return rows
    }

    static func matches(_ frameAddress: CallFrameRule.FrameAddress, _ text: String) -> Bool {
        switch frameAddress {
        case .expression:
            return text == "exp"
        case .register(let register, let offset):
            guard let sign = text.firstIndex(where: { $0 == "+" || $0 == "-" }),
                let number = registerNumbers[String(text[..<sign])], let value = Int64(text[sign...].replacing("+", with: ""))
            else { return false }
            return number == Int(register) && value == offset
        }
    }

    static func matches(_ rule: CallFrameRule.Register, _ text: String) -> Bool {
        switch rule {
        // readelf prints a column it has seen but that is not set here as "u" too.
        case .unchanged: return text == "u" || text == "s"
        case .undefined: return text == "u"
        case .savedAt(let offset): return text == "c" + (offset >= 0 ? "+" : "") + String(offset)
        case .valueAt(let offset): return text == "v" + (offset >= 0 ? "+" : "") + String(offset)
        case .inRegister(let register): return text == "r\(register)"
        case .expression: return text == "exp"
        case .valueExpression: return text == "vexp"
        }
    }

    static func objects() throws -> [String] {
        var paths = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]
        if FileManager.default.fileExists(atPath: "/lib/x86_64-linux-gnu/libstdc++.so.6") {
            paths.append("/lib/x86_64-linux-gnu/libstdc++.so.6")
        }
        paths.append(try FixtureBuilder.build(["sample-cxx.cpp"], output: "sample/sample-cxx"))
        return paths
    }

    @Test("the rule at the first and last address of every row equals readelf's, on libc, the loader, libstdc++ and a C++ fixture")
    func rulesMatchReadelf() throws {
        for path in try Self.objects() {
            let object = try ObjectSymbols.load(path: path)
            let table = try #require(try CallFrameTable(object: object), "\(path) has PT_GNU_EH_FRAME")
            let rows = try Self.oracle(path)
            #expect(rows.count > 50, "\(path): \(rows.count) rows from readelf")
            var mismatches: [String] = []
            var compared = 0
            for row in rows {
                for address in Set([row.start, row.end - 1]) {
                    compared += 1
                    guard let rule = try table.rule(at: address) else {
                        mismatches.append("0x\(String(address, radix: 16)): no rule")
                        continue
                    }
                    var same = Self.matches(rule.frameAddress, row.frameAddress)
                    var listed = Set<Int>()
                    for (register, text) in row.columns {
                        listed.insert(register)
                        same = same && Self.matches(rule.registers[register], text)
                    }
                    for register in 0..<CallFrameRule.registerCount where !listed.contains(register) {
                        same = same && rule.registers[register] == .unchanged
                    }
                    if !same {
                        mismatches.append("0x\(String(address, radix: 16)): \(rule) vs \(row.frameAddress) \(row.columns)")
                    }
                }
            }
            #expect(mismatches.isEmpty, "\(path): \(mismatches.count) of \(compared): \(mismatches.prefix(5))")
        }
    }

    @Test("addresses outside every function have no rule; a function's range is its FDE's")
    func outsideAndRanges() throws {
        let path = "/lib/x86_64-linux-gnu/libc.so.6"
        let table = try #require(try CallFrameTable(object: try ObjectSymbols.load(path: path)))
        let rows = try Self.oracle(path)
        #expect(try table.rule(at: 0) == nil)
        #expect(try table.rule(at: UInt64.max) == nil)
        let row = try #require(rows.first)
        let range = try #require(try table.function(containing: row.start))
        #expect(range.contains(row.start))
        #expect(try table.rule(at: row.start)?.functionStart == range.lowerBound)
    }

    @Test("without .eh_frame_hdr's table, .eh_frame is scanned and gives the same rules")
    func scannedWithoutTable() throws {
        let path = "/lib/x86_64-linux-gnu/libc.so.6"
        let object = try ObjectSymbols.load(path: path)
        let header = try #require(object.ehFrameHeader)
        let segments = object.segments.map { CallFrameTable.Segment(vaddr: $0.vaddr, offset: $0.offset, fileSize: $0.fileSize) }
        let segment = try #require(segments.first { $0.vaddr <= header && header < $0.vaddr + $0.fileSize })
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: object.bytes.count, alignment: 16)
        defer { buffer.deallocate() }
        buffer.copyMemory(from: object.bytes)
        buffer[Int(segment.offset + (header - segment.vaddr)) + 3] = 0xff  // the table's encoding: omitted
        let scanned = try CallFrameTable(bytes: UnsafeRawBufferPointer(buffer), segments: segments, ehFrameHeader: header)
        let indexed = try #require(try CallFrameTable(object: object))
        let rows = try Self.oracle(path)
        var compared = 0
        for row in rows where row.start % 7 == 0 || row.end % 5 == 0 {
            for address in [row.start, row.end - 1] {
                #expect(try scanned.rule(at: address) == indexed.rule(at: address), "0x\(String(address, radix: 16))")
                compared += 1
            }
        }
        #expect(compared > 1000)
        #expect(try scanned.rule(at: 0) == nil)
    }

    @Test("inputs libFuzzer found (Fuzz/run.sh): an error, no trap")
    func fuzzerFindings() {
        // A header whose eh_frame_ptr is a 10-byte sleb128 (shift 63 with the sign bit: the
        // sign extension overflowed).
        let crashes = ["AakkAP////6Y////SAgOQhAOQhj/AQAAAAAIRNX/////Uw=="]
        for text in crashes {
            guard let bytes = Data(base64Encoded: text) else {
                Issue.record("bad base64 \(text)")
                continue
            }
            bytes.withUnsafeBytes { raw in
                let segment = CallFrameTable.Segment(vaddr: 0x20_0000, offset: 0, fileSize: UInt64(raw.count))
                if let table = try? CallFrameTable(bytes: raw, segments: [segment], ehFrameHeader: 0x20_0000) {
                    _ = try? table.rule(at: 0x20_0000)
                }
            }
        }
    }


    @Test("mutated .eh_frame and .eh_frame_hdr of libc: a rule, nil or an ELFError for every address, never a crash")
    func fuzzedCallFrameInformation() throws {
        let path = "/lib/x86_64-linux-gnu/libc.so.6"
        let object = try ObjectSymbols.load(path: path)
        let header = try #require(object.ehFrameHeader)
        let segments = object.segments.map { CallFrameTable.Segment(vaddr: $0.vaddr, offset: $0.offset, fileSize: $0.fileSize) }
        let rows = try Self.oracle(path)
        let original = Array(object.bytes)
        // The call frame bytes: from .eh_frame_hdr to the end of its segment (.eh_frame follows it).
        let segment = try #require(segments.first { $0.vaddr <= header && header < $0.vaddr + $0.fileSize })
        let first = Int(segment.offset + (header - segment.vaddr))
        let last = Int(segment.offset + segment.fileSize)
        let environment = ProcessInfo.processInfo.environment
        let count = environment["LP_FUZZ_FRAMES"].flatMap(Int.init) ?? 300
        // Seeded (SplitMix64, as prewarm's random holds), so a failure replays.
        var generator = SplitMix64(seed: environment["LP_FUZZ_SEED"].flatMap(UInt64.init) ?? 21)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: original.count, alignment: 16)
        defer { buffer.deallocate() }
        var outcomes = (rules: 0, none: 0, errors: 0, rejectedTables: 0)
        for mutant in 0..<count {
            buffer.copyBytes(from: original)
            var mutatedSegments = segments
            // Most mutants damage bytes near the start (the header, the table, the first entries),
            // where every lookup passes; the rest anywhere.
            let span = mutant % 3 == 0 ? last - first : min(4096, last - first)
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let at = first + Int.random(in: 0..<span, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: buffer[at] = UInt8.random(in: 0...255, using: &generator)
                case 1: buffer[at] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
                case 2:
                    let value: UInt32 = [0, 0xffff_ffff, 0x7fff_ffff, 0x8000_0000, 1, 4][Int.random(in: 0..<6, using: &generator)]
                    if at + 4 <= last { buffer.storeBytes(of: value.littleEndian, toByteOffset: at, as: UInt32.self) }
                default: buffer[at] = [0x0a, 0x0b, 0x0f, 0x16, 0x2f, 0x3f, 0xff][Int.random(in: 0..<7, using: &generator)]
                }
            }
            if mutant % 10 == 9, let index = mutatedSegments.firstIndex(of: segment) {
                mutatedSegments[index].fileSize = UInt64.random(in: 0...segment.fileSize, using: &generator)
            }
            let table: CallFrameTable
            do {
                table = try CallFrameTable(
                    bytes: UnsafeRawBufferPointer(buffer), segments: mutatedSegments, ehFrameHeader: header)
            } catch {
                outcomes.rejectedTables += 1
                #expect(!error.description.isEmpty)
                continue
            }
            for _ in 0..<40 {
                let row = rows[Int.random(in: 0..<rows.count, using: &generator)]
                let address = Bool.random(using: &generator) ? row.start : UInt64.random(in: 0...UInt64.max, using: &generator)
                do {
                    if try table.rule(at: address) != nil { outcomes.rules += 1 } else { outcomes.none += 1 }
                    _ = try table.function(containing: address)
                } catch {
                    outcomes.errors += 1
                    #expect(!error.description.isEmpty)
                }
            }
        }
        // Some mutants must still be read and some refused: otherwise the mutations missed.
        #expect(outcomes.rules > 0, "\(outcomes)")
        #expect(outcomes.errors + outcomes.rejectedTables > 0, "\(outcomes)")
    }
}
