import Foundation
import LaunchprofELF
import Testing

/// Damaged ELF files and the host's capabilities.
@Suite("ELF: damaged files and host capabilities")
struct ELFRobustnessTests {
    /// Writes `bytes` to a scratch file and reads it back as an ELF image.
    static func read(_ bytes: [UInt8], name: String) throws -> Result<ELFImage, ELFError> {
        let directory = FixtureBuilder.outputRoot.appendingPathComponent("elf/damaged").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return Result { () throws(ELFError) in try ELFImage.read(path: path) }
    }

    @Test("every header field damaged, every truncation: an image or an ELFError, never a crash")
    func damagedFiles() throws {
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: "/bin/true")))
        var outcomes = (read: 0, rejected: 0)
        // Each byte of the ELF header and the first program headers, set to 0xff and to 0x00.
        for offset in 0..<min(64 + 56 * 13, original.count) {
            for value: UInt8 in [0xff, 0x00] where original[offset] != value {
                var bytes = original
                bytes[offset] = value
                switch try Self.read(bytes, name: "byte") {
                case .success(let image):
                    outcomes.read += 1
                    _ = DependencyResolver(cache: nil, host: .init(vendorID: "", flags: [])).resolve(program: image, environment: [:])
                case .failure(let error):
                    outcomes.rejected += 1
                    #expect(!error.description.isEmpty)
                }
            }
        }
        // Truncations at many lengths: as the kernel sees it, a prefix holding every loadable
        // segment is the program (only section headers or symbols are cut: it runs), a shorter
        // one is not.
        let segmentsEnd = Self.loadableSegmentsEnd(original)
        #expect(segmentsEnd > 64 && segmentsEnd < original.count)
        for length in stride(from: 0, to: original.count, by: 397) {
            let read = try Self.read(Array(original.prefix(length)), name: "cut")
            switch (read, length >= segmentsEnd) {
            case (.success, false): Issue.record("a \(length)-byte prefix of /bin/true (segments end at \(segmentsEnd)) was read as a whole program")
            case (.failure(let error), true): Issue.record("a \(length)-byte prefix holding every segment was refused: \(error)")
            default: break
            }
        }
        #expect(outcomes.read > 0)
        #expect(outcomes.rejected > 0)
    }

    /// Where the file bytes of the last PT_LOAD segment end (ELF64 little-endian).
    static func loadableSegmentsEnd(_ bytes: [UInt8]) -> Int {
        func field(_ offset: Int, _ size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        let (table, size, count) = (field(32, 8), field(54, 2), field(56, 2))
        return (0..<count).map { table + $0 * size }.filter { field($0, 4) == 1 }
            .map { field($0 + 8, 8) + field($0 + 32, 8) }.max() ?? 0
    }

    /// `ld.so --help`'s sections: glibc-hwcaps subdirectories and legacy hwcap names, each with
    /// whether the running loader supports it and whether it is the `AT_PLATFORM` entry.
    static func loaderHelp() throws -> (hwcaps: [String], legacy: [(name: String, supported: Bool, platform: Bool)]) {
        let help = try InspectTruth.run("/lib64/ld-linux-x86-64.so.2", ["--help"]).stdout
        var hwcaps: [String] = []
        var legacy: [(String, Bool, Bool)] = []
        var section = ""
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") {
                section = String(line)
                continue
            }
            let text = line.trimmingCharacters(in: .whitespaces)
            guard let name = text.split(separator: " ").first.map(String.init) else { continue }
            if section.hasPrefix("Subdirectories of glibc-hwcaps"), text.contains("supported") {
                hwcaps.append(name)
            } else if section.hasPrefix("Legacy HWCAP subdirectories") {
                legacy.append((name, text.contains("supported"), text.contains("AT_PLATFORM")))
            }
        }
        return (hwcaps, legacy)
    }

    @Test("glibc-hwcaps subdirectories, $PLATFORM and legacy hwcap names equal what the loader reports")
    func hostMatchesLoader() throws {
        let help = try Self.loaderHelp()
        let host = HostCapabilities.current()
        #expect(host.hwcapsSubdirectories == help.hwcaps)
        #expect(host.platform == help.legacy.first { $0.platform }?.name)
        // The loader lists each name once; the model's longest legacy subdirectory holds every
        // name it supports, the platform and "tls" included.
        let supported = Set(help.legacy.filter(\.supported).map(\.name))
        let longest = host.legacySubdirectories.first.map { Set($0.split(separator: "/").map(String.init)) }
        #expect(longest == supported)
        #expect(!help.legacy.isEmpty)
    }

    @Test("the loader searches a directory's subdirectories in the model's order (LD_DEBUG=libs)")
    func searchOrderMatchesLoader() throws {
        // An empty LD_LIBRARY_PATH directory: the loader tries every subdirectory of it for
        // libc.so.6 before it falls back to the cache, and says so.
        let directory = FixtureBuilder.outputRoot.appendingPathComponent("elf/empty-search-dir").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let output = try InspectTruth.run(
            "/bin/true", [], environment: ["LD_LIBRARY_PATH": directory, "LD_DEBUG": "libs"])
        var tried: [String] = []
        for line in output.stderr.split(separator: "\n") {
            guard let range = line.range(of: "trying file=\(directory)/") else { continue }
            let relative = line[range.upperBound...].dropLast("libc.so.6".count)
            let subdirectory = relative.hasSuffix("/") ? String(relative.dropLast()) : String(relative)
            if !tried.contains(subdirectory) { tried.append(subdirectory) }
        }
        let host = HostCapabilities.current()
        let model = host.hwcapsSubdirectories.map { "glibc-hwcaps/\($0)" } + host.legacySubdirectories + [""]
        #expect(tried == model)
    }

    /// /proc/cpuinfo flags recorded from real machines (the feature sets that matter here).
    static let v2: Set<String> = ["cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"]
    static let v3 = v2.union(["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"])
    static let v4 = v3.union(["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"])

    @Test("Intel: $PLATFORM is haswell with its feature set, xeon_phi with AVX-512 ER/PF; avx512_1 searched")
    func intelRule() {
        let haswell = HostCapabilities(vendorID: "GenuineIntel", flags: Self.v3)
        #expect(haswell.platform == "haswell")
        #expect(haswell.hwcapsSubdirectories == ["x86-64-v3", "x86-64-v2"])
        #expect(haswell.legacySubdirectories == [
            "tls/haswell/x86_64", "tls/haswell", "tls/x86_64", "tls", "haswell/x86_64", "haswell", "x86_64",
        ])
        let skylakeServer = HostCapabilities(vendorID: "GenuineIntel", flags: Self.v4)
        #expect(skylakeServer.platform == "haswell")
        #expect(skylakeServer.legacySubdirectories.first == "tls/haswell/avx512_1/x86_64")
        #expect(skylakeServer.legacySubdirectories.count == 15)
        let knightsLanding = HostCapabilities(
            vendorID: "GenuineIntel", flags: Self.v3.union(["avx512f", "avx512cd", "avx512er", "avx512pf"]))
        #expect(knightsLanding.platform == "xeon_phi")
        // Without LZCNT ("abm") there is no haswell platform: the kernel's name stays.
        #expect(HostCapabilities(vendorID: "GenuineIntel", flags: Self.v3.subtracting(["abm"])).platform == "x86_64")
    }

    @Test("AMD and other vendors: $PLATFORM is the kernel's AT_PLATFORM whatever the flags")
    func otherVendorsRule() {
        for vendor in ["AuthenticAMD", "HygonGenuine", "CentaurHauls", ""] {
            let host = HostCapabilities(vendorID: vendor, flags: Self.v4, kernelPlatform: "x86_64")
            #expect(host.platform == "x86_64")
            #expect(host.hwcapsSubdirectories == ["x86-64-v4", "x86-64-v3", "x86-64-v2"])
            // x86_64 twice (the hwcap bit and the platform) collapses to one search each.
            #expect(host.legacySubdirectories == ["tls/x86_64/x86_64", "tls/x86_64", "tls", "x86_64/x86_64", "x86_64"])
        }
    }

    @Test("ISA levels from CPU flags nest on every vendor")
    func capabilitiesFromFlags() {
        for vendor in ["GenuineIntel", "AuthenticAMD"] {
            #expect(HostCapabilities(vendorID: vendor, flags: []).hwcapsSubdirectories.isEmpty)
            #expect(HostCapabilities(vendorID: vendor, flags: []).platform == "x86_64")
            #expect(HostCapabilities(vendorID: vendor, flags: Self.v2).hwcapsSubdirectories == ["x86-64-v2"])
            // AVX-512 without the v3 base does not make a v4 machine.
            #expect(HostCapabilities(vendorID: vendor, flags: Self.v2.union(Self.v4.subtracting(Self.v3)))
                .hwcapsSubdirectories == ["x86-64-v2"])
            #expect(HostCapabilities(vendorID: vendor, flags: []).libDirectory == "lib/x86_64-linux-gnu")
        }
    }
}
