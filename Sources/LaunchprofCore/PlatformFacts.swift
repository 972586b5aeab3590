import LaunchprofSystem
import LaunchprofReport
import LaunchprofTracing
import Glibc

/// Facts about the machine that MetricKit's metadata needs and `LaunchReport.Host` does not
/// hold: the distribution, the architecture and the locale's territory.
public enum PlatformFacts {
    /// `PRETTY_NAME` of /etc/os-release (else /usr/lib/os-release), e.g. "Debian GNU/Linux 12
    /// (bookworm)"; "Linux" when neither names one.
    public static func distribution() -> String {
        for path in ["/etc/os-release", "/usr/lib/os-release"] {
            guard let text = SmallFile.read(path) else { continue }
            for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                var value = line.dropFirst("PRETTY_NAME=".count)
                if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                    value = value.dropFirst().dropLast()
                }
                if !value.isEmpty { return String(value) }
            }
        }
        return "Linux"
    }

    /// `uname -m`.
    public static func architecture() -> String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        return withUnsafeBytes(of: &names.machine) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The territory of the locale launchprof runs under (`LC_ALL`, else `LC_TIME`, else `LANG`):
    /// "en_US.UTF-8" → "US"; nil for C, POSIX or no territory.
    public static func regionFormat(environment: [String: String]) -> String? {
        let locale = ["LC_ALL", "LC_TIME", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let locale else { return nil }
        let name = locale.split(separator: ".").first.map(String.init) ?? locale
        guard let underscore = name.firstIndex(of: "_") else { return nil }
        let territory = name[name.index(after: underscore)...].prefix { $0 != "@" }
        return territory.isEmpty ? nil : String(territory)
    }

    /// A `CLOCK_MONOTONIC` reading with its `CLOCK_BOOTTIME` peer: the two clocks differ by the
    /// time the machine was suspended, which is measured now (a run is seconds old at most).
    public static func spawnInstant(monotonicNs: UInt64) -> SpawnInstant {
        var monotonic = timespec()
        var boottime = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &boottime) == 0, clock_gettime(CLOCK_MONOTONIC, &monotonic) == 0 else {
            return SpawnInstant(monotonicNs: monotonicNs, boottimeNs: monotonicNs)
        }
        let suspended = max(0, nanoseconds(boottime) - nanoseconds(monotonic))
        return SpawnInstant(monotonicNs: monotonicNs, boottimeNs: monotonicNs &+ UInt64(suspended))
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
}
