import LaunchprofSystem
import LaunchprofTracing
#if canImport(Glibc)
import Glibc
#endif

/// Suspends one process with the cgroup v2 freezer, for the `suspended` state of
/// `--resume-cycles`: under ptrace a SIGSTOP would be resumed by the tracer itself, while a
/// frozen cgroup's tasks stay off the CPU without any ptrace stop. The process is moved into a
/// cgroup of its own under the v2 hierarchy (`/sys/fs/cgroup` or, in the hybrid layout,
/// `/sys/fs/cgroup/unified`); a fatal signal still ends a frozen task, so launchprof's own
/// cleanup (SIGKILL) works on it. Nil when there is no writable v2 hierarchy.
///
/// The cgroup is named `launchprof-<launchprof's pid>-<the app's pid>`: a launchprof killed
/// (SIGKILL) mid-cycle cannot remove its own, so the next one removes every cgroup whose owner
/// is no longer a live launchprof (`removeStale`).
final class CgroupFreezer {
    let directory: String

    init?(pid: Int32) {
        guard pid > 0, let root = Self.root() else { return nil }
        directory = "\(root)/launchprof-\(getpid())-\(pid)"
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else { return nil }
        guard Self.write("\(pid)", to: directory + "/cgroup.procs") else {
            rmdir(directory)
            return nil
        }
    }

    /// Freezes and waits (at most a second) until the kernel reports the cgroup frozen.
    func freeze() -> Bool {
        guard Self.write("1", to: directory + "/cgroup.freeze") else { return false }
        for _ in 0..<1000 {
            if SmallFile.read(directory + "/cgroup.events")?.contains("frozen 1") == true { return true }
            var delay = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&delay, nil)
        }
        return false
    }

    func thaw() { _ = Self.write("0", to: directory + "/cgroup.freeze") }

    /// Thaws, moves any process still inside back to the root and removes the cgroup.
    func remove() {
        Self.remove(directory)
    }

    private static func remove(_ directory: String) {
        _ = write("0", to: directory + "/cgroup.freeze")
        if let procs = SmallFile.read(directory + "/cgroup.procs"), let root = root() {
            for pid in procs.split(separator: "\n") { _ = write(String(pid), to: root + "/cgroup.procs") }
        }
        rmdir(directory)
    }

    /// Removes the cgroups left by launchprof processes that died without removing theirs
    /// (thawed, any process inside moved back to the root). Returns the paths removed.
    @discardableResult
    static func removeStale() -> [String] {
        guard let root = root(), let names = DirectoryListing.names(root) else { return [] }
        var stale: [String] = []
        for name in names {
            let parts = name.split(separator: "-")
            guard parts.count == 3, parts[0] == "launchprof", let owner = Int32(parts[1]), owner != getpid(),
                !isLaunchprof(owner)
            else { continue }
            stale.append(root + "/" + name)
        }
        for directory in stale { remove(directory) }
        return stale
    }

    /// Whether `pid` is a live launchprof (or a process embedding it, such as its tests): a pid
    /// reused by another program does not keep a dead launchprof's cgroup alive.
    private static func isLaunchprof(_ pid: Int32) -> Bool {
        guard let comm = SmallFile.read("/proc/\(pid)/comm") else { return false }
        return comm.hasPrefix("launchprof")
    }

    static func root() -> String? {
        for candidate in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        where access(candidate + "/cgroup.procs", W_OK) == 0 && access(candidate + "/cgroup.controllers", R_OK) == 0 {
            return candidate
        }
        return nil
    }

    private static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return text.withCString { Glibc.write(fd, $0, strlen($0)) } == text.utf8.count
    }
}
