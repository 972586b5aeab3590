import Foundation
import LaunchprofELF
import Testing

@Suite("ELF: ld.so.cache")
struct LoaderCacheTests {
    @Test("lookups equal ldconfig -p for every x86-64 entry")
    func lookupsMatchLdconfig() throws {
        let cache = try LoaderCache.load(path: LoaderCache.defaultPath)
        let output = try InspectTruth.run("/sbin/ldconfig", ["-p"]).stdout
        var expected: [String: String] = [:]
        for line in output.split(separator: "\n") where line.contains("(libc6,x86-64") && line.contains(" => ") {
            let name = line.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]
            let path = line.components(separatedBy: " => ").last ?? ""
            // ldconfig -p lists the entries in the cache's order: the first one wins, as in ld.so.
            if expected[String(name)] == nil { expected[String(name)] = path }
        }
        #expect(expected.count > 100)
        #expect(cache.entryCount >= expected.count)
        let host = HostCapabilities.current()
        for (name, path) in expected {
            #expect(cache.lookup(name, hwcaps: host.hwcapsSubdirectories) == path, "\(name)")
        }
        #expect(cache.lookup("libdoes-not-exist.so.1", hwcaps: []) == nil)
    }

    @Test("corrupt caches are rejected, never crash")
    func corruptCaches() throws {
        let real = Array(try Data(contentsOf: URL(fileURLWithPath: LoaderCache.defaultPath)))
        #expect(throws: ELFError.self) { try LoaderCache(bytes: []) }
        #expect(throws: ELFError.self) { try LoaderCache(bytes: Array("not a cache at all".utf8)) }
        #expect(throws: ELFError.self) { try LoaderCache(bytes: Array(real.prefix(60))) }
        // Every truncation either parses or throws; lookups on what parses return nil or a path.
        for length in stride(from: 0, to: real.count, by: max(1, real.count / 97)) {
            if let cache = try? LoaderCache(bytes: Array(real.prefix(length))) {
                _ = cache.lookup("libc.so.6", hwcaps: ["x86-64-v2"])
            }
        }
    }

    @Test("glibc-hwcaps entries win by subdirectory priority")
    func hwcapsSelection() throws {
        // A hand-built cache: libx.so.1 plain, in x86-64-v2 and in x86-64-v3.
        var strings: [UInt8] = []
        var offsets: [String: UInt32] = [:]
        let headerSize = 48
        let entries = [
            ("libx.so.1", "/hw/x86-64-v3/libx.so.1", UInt64(1) << 62 | 1),
            ("libx.so.1", "/hw/x86-64-v2/libx.so.1", UInt64(1) << 62 | 0),
            ("libx.so.1", "/plain/libx.so.1", 0),
        ]
        let stringBase = headerSize + entries.count * 24
        func intern(_ text: String) -> UInt32 {
            if let offset = offsets[text] { return offset }
            let offset = UInt32(stringBase + strings.count)
            strings += Array(text.utf8) + [0]
            offsets[text] = offset
            return offset
        }
        var body: [UInt8] = []
        func put32(_ value: UInt32, _ into: inout [UInt8]) { withUnsafeBytes(of: value.littleEndian) { into += $0 } }
        func put64(_ value: UInt64, _ into: inout [UInt8]) { withUnsafeBytes(of: value.littleEndian) { into += $0 } }
        for (key, value, hwcap) in entries {
            put32(0x0303, &body)
            put32(intern(key), &body)
            put32(intern(value), &body)
            put32(0, &body)
            put64(hwcap, &body)
        }
        let v2 = intern("x86-64-v2")
        let v3 = intern("x86-64-v3")
        while (stringBase + strings.count) % 8 != 0 { strings.append(0) }
        let extensionOffset = UInt32(stringBase + strings.count)
        var extensionBytes: [UInt8] = []
        put32(0xeaa4_2174, &extensionBytes)
        put32(1, &extensionBytes)
        put32(1, &extensionBytes)  // glibc-hwcaps
        put32(0, &extensionBytes)
        put32(extensionOffset + 24, &extensionBytes)
        put32(8, &extensionBytes)
        put32(v2, &extensionBytes)
        put32(v3, &extensionBytes)
        var header = Array("glibc-ld.so.cache1.1".utf8)
        put32(UInt32(entries.count), &header)
        put32(UInt32(strings.count), &header)
        header += [2, 0, 0, 0]
        put32(extensionOffset, &header)
        header += [UInt8](repeating: 0, count: 12)
        let cache = try LoaderCache(bytes: header + body + strings + extensionBytes)
        #expect(cache.hwcapsSubdirectories == ["x86-64-v2", "x86-64-v3"])
        #expect(cache.lookup("libx.so.1", hwcaps: ["x86-64-v3", "x86-64-v2"]) == "/hw/x86-64-v3/libx.so.1")
        #expect(cache.lookup("libx.so.1", hwcaps: ["x86-64-v2"]) == "/hw/x86-64-v2/libx.so.1")
        #expect(cache.lookup("libx.so.1", hwcaps: []) == "/plain/libx.so.1")
    }
}
