import LaunchprofSystem
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// Whether this host lets launchprof observe launches with uprobe perf events, and why not.
public enum UprobeSupport {
    /// The uprobe PMU's perf event type, or why uprobes cannot be used.
    ///
    /// - Parameter sysfsRoot: where sysfs is mounted (tests point it elsewhere).
    public static func pmuType(sysfsRoot: String = "/sys") -> Result<UInt32, UprobeError> {
        guard hasPerfPrivilege() else {
            return .failure(.unavailable(
                reason: "uprobe perf events need root or CAP_SYS_ADMIN (launchprof has neither; CAP_PERFMON alone is refused for uprobes)"))
        }
        let path = "\(sysfsRoot)/bus/event_source/devices/uprobe/type"
        guard let text = SmallFile.read(path) else {
            return .failure(.unavailable(
                reason: "the kernel has no uprobe PMU (\(path) is missing: CONFIG_UPROBE_EVENTS)"))
        }
        guard let type = UInt32(trimmed(Substring(text))) else {
            return .failure(.unavailable(reason: "\(path) does not hold a PMU type number"))
        }
        return .success(type)
    }

    /// Waits (at most 5 s) until the earlier launchprofs releasing their probes when it starts
    /// (processes named `lp-uprobe-free`) are done. While the kernel unregisters them, a new
    /// process mapping the probed files can stall for hundreds of ms in its exec — a measured
    /// launch would carry that stall in its `exec` phase — and new probes queue behind the
    /// release. Releases that start later are not waited for: on a machine where launchprofs
    /// keep exiting, that wait would never end. Polled: those processes are no child of this one.
    /// A wait longer than `quietWaitNs` is announced on stderr, with what it waits for.
    /// How long a release may take before launchprof says it waits for one.
    static let quietWaitNs: UInt64 = 100_000_000

    static func awaitEarlierReleases() {
        let start = monotonicNs()
        let deadline = start + 5_000_000_000
        var releasers = releasesInProgress()
        var announced = false
        while let releaser = releasers.first {
            let now = monotonicNs()
            if now >= deadline {
                StatusLine.say("gave up waiting for process \(releaser) (lp-uprobe-free) after 5 s; the first launches may stall in exec")
                return
            }
            if !announced, now - start >= quietWaitNs {
                announced = true
                StatusLine.say("waiting for an earlier launchprof's uprobes to be released (process \(releaser), lp-uprobe-free: the kernel waits for RCU grace periods, ~0.1 s per probe); a launch during it would stall in exec")
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
            nanosleep(&pause, nil)
            releasers = releasers.filter { SmallFile.read("/proc/\($0)/comm") == "lp-uprobe-free\n" }
        }
        if announced {
            StatusLine.say("the release finished after \((monotonicNs() - start) / 1_000_000) ms")
        }
    }

    /// The processes releasing probes now.
    private static func releasesInProgress() -> [Int32] {
        var found: [Int32] = []
        for name in DirectoryListing.names("/proc") ?? [] {
            guard let first = name.first, first.isNumber, let pid = Int32(name) else { continue }
            if SmallFile.read("/proc/\(name)/comm") == "lp-uprobe-free\n" { found.append(pid) }
        }
        return found
    }

    private static func monotonicNs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Root, or CAP_SYS_ADMIN (21) in the effective set: the kernel refuses uprobe perf events
    /// to CAP_PERFMON (38) alone (checked on 6.18: `perf_event_open` EACCES).
    static func hasPerfPrivilege() -> Bool {
        if geteuid() == 0 { return true }
        guard let status = SmallFile.read("/proc/self/status") else { return false }
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = trimmed(line.dropFirst("CapEff:".count))
            guard let mask = UInt64(hex, radix: 16) else { return false }
            return mask & (1 << 21) != 0
        }
        return false
    }

    private static func trimmed(_ text: Substring) -> Substring {
        text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\n" }
            .reversed().reduce(into: Substring()) { $0.append($1) }
    }

}

/// Why the uprobe observer cannot run or failed. Each case names its subject.
public enum UprobeError: LaunchprofError, Sendable, Equatable {
    /// This host or user cannot use uprobe perf events.
    case unavailable(reason: String)
    /// A perf request failed on a probe.
    case perf(operation: String, subject: String, errno: Int32)

    /// The observer cannot run here, or a probe cannot be armed.
    public var exitCause: ExitCause { .unavailable }

    public var description: String {
        switch self {
        case .unavailable(let reason):
            "The uprobe observer is not available: \(reason). Use --observer ptrace (or auto)."
        case .perf(let operation, let subject, let errno):
            "perf \(operation) for \(subject) failed: \(errnoDescription(errno))"
                + (errno == EACCES || errno == EPERM ? " (needs root or CAP_SYS_ADMIN: CAP_PERFMON alone is refused for uprobes)" : "")
        }
    }
}

