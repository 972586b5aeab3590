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
                    _ = DependencyResolver(cache: nil, host: .init(flags: [])).resolve(program: image, environment: [:])
                case .failure(let error):
                    outcomes.rejected += 1
                    #expect(!error.description.isEmpty)
                }
            }
        }
        // Truncations at many lengths.
        for length in stride(from: 0, to: original.count, by: 397) {
            if case .success = try Self.read(Array(original.prefix(length)), name: "cut") {
                Issue.record("a \(length)-byte prefix of /bin/true was read as a whole program")
            }
        }
        #expect(outcomes.read > 0)
        #expect(outcomes.rejected > 0)
    }

    @Test("glibc-hwcaps subdirectories and $PLATFORM equal what the loader reports")
    func hostMatchesLoader() throws {
        let help = try InspectTruth.run("/lib64/ld-linux-x86-64.so.2", ["--help"]).stdout
        let supported = help.split(separator: "\n").compactMap { line -> String? in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("x86-64-v"), text.contains("supported, searched") else { return nil }
            return String(text.split(separator: " ")[0])
        }
        let host = HostCapabilities.current()
        #expect(host.hwcapsSubdirectories == supported)
        let platform = help.split(separator: "\n").first { $0.contains("(AT_PLATFORM;") }
            .map { String($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) }
        #expect(host.platform == platform)
    }

    @Test("capabilities from CPU flags: levels nest, platform follows the haswell set")
    func capabilitiesFromFlags() {
        let v2: Set<String> = ["cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"]
        let v3 = v2.union(["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"])
        let v4 = v3.union(["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"])
        #expect(HostCapabilities(flags: []).hwcapsSubdirectories.isEmpty)
        #expect(HostCapabilities(flags: []).platform == "x86_64")
        #expect(HostCapabilities(flags: v2).hwcapsSubdirectories == ["x86-64-v2"])
        #expect(HostCapabilities(flags: v3).hwcapsSubdirectories == ["x86-64-v3", "x86-64-v2"])
        #expect(HostCapabilities(flags: v3).platform == "haswell")
        #expect(HostCapabilities(flags: v3, vendor: "AuthenticAMD").platform == "x86_64", "haswell is Intel-only in glibc 2.36")
        #expect(HostCapabilities(flags: v4).hwcapsSubdirectories == ["x86-64-v4", "x86-64-v3", "x86-64-v2"])
        // AVX-512 without the v3 base does not make a v4 machine.
        #expect(HostCapabilities(flags: v2.union(["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]))
            .hwcapsSubdirectories == ["x86-64-v2"])
        #expect(HostCapabilities(flags: []).libDirectory == "lib/x86_64-linux-gnu")
    }
}
