import LaunchprofSystem
import CLaunchprof
import LaunchprofTracing
import Glibc
import LaunchprofReport

/// Facts about the machine a report was measured on, for `LaunchReport.host`.
public enum HostInfo {
    /// Reads the kernel release, CPU model, online CPUs and C library. A fact that cannot be
    /// read is "unknown" (or 0 cores): the report is still worth writing.
    public static func current() -> LaunchReport.Host {
        LaunchReport.Host(
            kernel: kernelRelease(), cpu: cpuModel(), cores: onlineCPUs(), libc: libc(), name: hostName())
    }

    /// `uname -n`: the label `export --openmetrics` gives the host; nil when it cannot be read.
    static func hostName() -> String? {
        var names = utsname()
        guard uname(&names) == 0 else { return nil }
        let name = withUnsafeBytes(of: &names.nodename) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return name.isEmpty ? nil : name
    }

    /// `uname -r`.
    public static func kernelRelease() -> String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        return withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The CPU's brand string: from CPUID on x86 (what the kernel prints), else the first
    /// `model name` in /proc/cpuinfo; other architectures name it differently. Read once: in a
    /// virtual machine each CPUID leaf is a trip to the hypervisor.
    public static func cpuModel() -> String { cpuBrand }

    private static let cpuBrand = readCPUModel()

    private static func readCPUModel() -> String {
        var brand = [CChar](repeating: 0, count: 64)
        if lp_cpu_brand(&brand, brand.count) == 0 {
            return String(decoding: brand.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        guard let text = SmallFile.read("/proc/cpuinfo") else { return "unknown" }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = parts[0].trimmingCharacters(in: " \t")
            if key == "model name" || key == "Model" || key == "cpu model" {
                return parts[1].trimmingCharacters(in: " \t")
            }
        }
        return "unknown"
    }

    static func onlineCPUs() -> Int {
        max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 0)
    }

    /// "glibc 2.36" from confstr(_CS_GNU_LIBC_VERSION), which glibc answers and musl does not.
    static func libc() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count)
        guard length > 0, length <= buffer.count else { return "unknown" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // glibc answers "glibc 2.36".
        return text.isEmpty ? "unknown" : text
    }

}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var slice = self[...]
        while let first = slice.first, characters.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, characters.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
