#if canImport(Glibc)
import Glibc
#endif

/// What this machine's loader substitutes and searches: glibc-hwcaps subdirectories it
/// supports (best first), `$PLATFORM`, `$LIB`.
public struct HostCapabilities: Sendable, Equatable {
    /// Supported glibc-hwcaps subdirectories, highest priority first (e.g. x86-64-v3, x86-64-v2).
    public var hwcapsSubdirectories: [String]
    /// What `$PLATFORM` expands to (glibc reports "haswell" on CPUs with its feature set).
    public var platform: String
    /// What `$LIB` expands to (Debian's multiarch library directory).
    public var libDirectory: String

    public init(hwcapsSubdirectories: [String], platform: String, libDirectory: String) {
        self.hwcapsSubdirectories = hwcapsSubdirectories
        self.platform = platform
        self.libDirectory = libDirectory
    }

    /// The capabilities of the running machine, from the CPU flags in /proc/cpuinfo.
    public static func current() -> HostCapabilities {
        let (flags, vendor) = cpuFlags()
        return HostCapabilities(flags: flags, vendor: vendor)
    }

    /// Capabilities for a CPU with the given /proc/cpuinfo flags and vendor_id. glibc 2.36
    /// names `$PLATFORM` haswell or xeon_phi only on Intel CPUs; elsewhere it stays x86_64.
    public init(flags: Set<String>, vendor: String = "GenuineIntel") {
        func has(_ names: [String]) -> Bool { names.allSatisfy(flags.contains) }
        let v2 = has(["cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"])
        let v3 = v2 && has(["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"])
        let v4 = v3 && has(["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"])
        var subdirectories: [String] = []
        if v4 { subdirectories.append("x86-64-v4") }
        if v3 { subdirectories.append("x86-64-v3") }
        if v2 { subdirectories.append("x86-64-v2") }
        let platform: String
        if vendor != "GenuineIntel" {
            platform = "x86_64"
        } else if flags.contains("avx512er") {
            platform = "xeon_phi"
        } else if has(["avx2", "bmi1", "bmi2", "abm", "movbe", "popcnt"]) {
            platform = "haswell"
        } else {
            platform = "x86_64"
        }
        self.init(hwcapsSubdirectories: subdirectories, platform: platform, libDirectory: "lib/x86_64-linux-gnu")
    }

    private static func cpuFlags() -> (flags: Set<String>, vendor: String) {
        let fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return ([], "") }
        defer { close(fd) }
        // The first processor's block holds its flags line; 16 KiB is ample for it.
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return ([], "") }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        var vendor = ""
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...]
            if line.hasPrefix("vendor_id"), vendor.isEmpty {
                vendor = value.split(separator: " ").first.map(String.init) ?? ""
            } else if line.hasPrefix("flags") {
                return (Set(value.split(separator: " ").map(String.init)), vendor)
            }
        }
        return ([], vendor)
    }
}
