#if canImport(Glibc)
import Glibc
#endif

/// What this machine's loader substitutes and searches: glibc-hwcaps subdirectories it
/// supports (best first), `$PLATFORM`, legacy hwcap subdirectories, `$LIB`.
///
/// glibc 2.36 on x86-64 derives these from the CPU, not from the kernel's `AT_HWCAP`: the ISA
/// levels from the feature flags alone, but the platform name and the `avx512_1` capability
/// only on Intel CPUs (`init_cpu_features` checks the vendor first). On every other vendor
/// `$PLATFORM` stays the kernel's `AT_PLATFORM` even with the same flags.
public struct HostCapabilities: Sendable, Equatable {
    /// Supported glibc-hwcaps subdirectories, highest priority first (e.g. x86-64-v3, x86-64-v2).
    public var hwcapsSubdirectories: [String]
    /// What `$PLATFORM` expands to: "haswell" or "xeon_phi" on Intel CPUs with their feature
    /// sets, else the kernel's `AT_PLATFORM` ("x86_64").
    public var platform: String
    /// Legacy hwcap subdirectories searched in every directory after the glibc-hwcaps ones, in
    /// the loader's order (e.g. "tls/x86_64/x86_64", …, "x86_64"); the directory itself last.
    public var legacySubdirectories: [String]
    /// What `$LIB` expands to (Debian's multiarch library directory).
    public var libDirectory: String

    public init(
        hwcapsSubdirectories: [String], platform: String, legacySubdirectories: [String] = [],
        libDirectory: String
    ) {
        self.hwcapsSubdirectories = hwcapsSubdirectories
        self.platform = platform
        self.legacySubdirectories = legacySubdirectories
        self.libDirectory = libDirectory
    }

    /// The capabilities of the running machine: the CPU's vendor and flags from /proc/cpuinfo
    /// (the kernel lists only features it enabled, as glibc's "usable" test requires) and the
    /// kernel's `AT_PLATFORM`.
    public static func current() -> HostCapabilities {
        let cpu = CPUDescription.current()
        return HostCapabilities(
            vendorID: cpu.vendorID, flags: cpu.flags, kernelPlatform: kernelPlatform() ?? "x86_64")
    }

    /// Capabilities for a CPU of `vendorID` ("GenuineIntel", "AuthenticAMD", …) with the given
    /// /proc/cpuinfo flags, on a kernel whose `AT_PLATFORM` is `kernelPlatform`.
    public init(vendorID: String, flags: Set<String>, kernelPlatform: String = "x86_64") {
        func has(_ names: [String]) -> Bool { names.allSatisfy(flags.contains) }
        let v2 = has(["cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"])
        let v3 = v2 && has(["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"])
        let v4 = v3 && has(["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"])
        var subdirectories: [String] = []
        if v4 { subdirectories.append("x86-64-v4") }
        if v3 { subdirectories.append("x86-64-v3") }
        if v2 { subdirectories.append("x86-64-v2") }

        // glibc's HWCAP_X86_64 is always set on x86-64; the rest is Intel-only.
        var hwcapNames = ["x86_64"]
        var platform = kernelPlatform
        if vendorID == "GenuineIntel" {
            var named: String?
            if has(["avx512f", "avx512cd"]) {
                if flags.contains("avx512er") {
                    if flags.contains("avx512pf") { named = "xeon_phi" }
                } else if has(["avx512bw", "avx512dq", "avx512vl"]) {
                    hwcapNames.append("avx512_1")
                }
            }
            // "abm" is how /proc/cpuinfo names LZCNT.
            if named == nil, has(["avx2", "fma", "bmi1", "bmi2", "abm", "movbe", "popcnt"]) {
                named = "haswell"
            }
            if let named { platform = named }
        }
        self.init(
            hwcapsSubdirectories: subdirectories, platform: platform,
            legacySubdirectories: Self.legacyCombinations(hwcapNames + [platform, "tls"]),
            libDirectory: "lib/x86_64-linux-gnu")
    }

    /// glibc 2.36's `_dl_important_hwcaps`: every non-empty subset of the capability names
    /// (hwcap bits in bit order, the platform, "tls"), as a path with the later names first;
    /// subsets that hold the later names come first. Repeats are searched once here (the
    /// loader tries them twice to no different effect).
    static func legacyCombinations(_ names: [String]) -> [String] {
        var result: [String] = []
        for mask in stride(from: (1 << names.count) - 1, through: 1, by: -1) {
            let path = names.indices.reversed().filter { mask & (1 << $0) != 0 }.map { names[$0] }
                .joined(separator: "/")
            if !result.contains(path) { result.append(path) }
        }
        return result
    }

    /// The kernel's `AT_PLATFORM` string for this process: /proc/self/auxv holds the address of
    /// the string on this process's own stack (Glibc's module map does not export getauxval).
    private static func kernelPlatform() -> String? {
        let atPlatform: UInt64 = 15
        let fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var words = [UInt64](repeating: 0, count: 128)
        let count = words.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        for pair in stride(from: 0, to: count / 8 - 1, by: 2) where words[pair] == atPlatform {
            guard let pointer = UnsafePointer<CChar>(bitPattern: UInt(words[pair + 1])) else { return nil }
            return String(cString: pointer)
        }
        return nil
    }
}

/// The first processor's `vendor_id` and `flags` lines of /proc/cpuinfo.
struct CPUDescription {
    var vendorID = ""
    var flags: Set<String> = []

    static func current() -> CPUDescription {
        let fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return CPUDescription() }
        defer { close(fd) }
        // The first processor's block holds both lines; 16 KiB is ample for it.
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return CPUDescription() }
        // Only the first processor's block (up to the first blank line): splitting every
        // processor's lines into Strings was a third of inspecting a small program.
        var end = count
        for index in 1..<count where buffer[index] == 10 && buffer[index - 1] == 10 {
            end = index
            break
        }
        return parse(String(decoding: buffer[0..<end], as: UTF8.self))
    }

    static func parse(_ text: String) -> CPUDescription {
        var result = CPUDescription()
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = trimmed(line[..<colon])
            let value = line[line.index(after: colon)...]
            if key == "vendor_id", result.vendorID.isEmpty {
                result.vendorID = trimmed(value)
            } else if key == "flags" {
                result.flags = Set(value.split(separator: " ").map(String.init))
                break
            }
        }
        return result
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
