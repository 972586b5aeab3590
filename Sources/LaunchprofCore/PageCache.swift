import CLaunchprof
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `--cold`: evicts the profiled program's closure — its files, and nothing else — from the page
/// cache before each run (POSIX_FADV_DONTNEED), and measures how much of them stayed resident
/// (mincore), so "cold" is a measurement, not an assumption. Pages another process maps
/// (libc.so.6, ld.so, usually) stay, whoever asks; launchprof says so once per process, naming
/// those files. The machine's other cached files are left alone (it used to drop the whole page
/// cache as root, before every run: every other program on the machine then read from disk).
enum PageCache {
    struct Residency: Sendable {
        var residentBytes: UInt64
        var totalBytes: UInt64
    }

    /// Whether this process said already what stayed resident.
    private static let said = Mutex(false)

    static func evict(_ paths: [String]) -> Residency {
        var residency = Residency(residentBytes: 0, totalBytes: 0)
        var stayed: [(name: String, bytes: UInt64)] = []
        for path in Set(paths).sorted() {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Dirty pages (a program just built, the usual case) are not dropped, only queued
            // for writing: written first, without a disk flush, so that they can be.
            _ = lp_write_back(fd)
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            let file = measure(fd)
            residency.residentBytes += file.residentBytes
            residency.totalBytes += file.totalBytes
            if file.residentBytes > 0 { stayed.append((String(path.split(separator: "/").last ?? Substring(path)), file.residentBytes)) }
        }
        if !stayed.isEmpty, !said.withLock({ said in defer { said = true }; return said }) {
            let named = stayed.sorted { $0.bytes > $1.bytes }.prefix(4).map { "\($0.name) \($0.bytes / 1024) KiB" }
            StatusLine.say(
                "--cold: \(residency.residentBytes / 1024) KiB of the closure's \(residency.totalBytes / 1024) KiB stayed in the page cache"
                    + " (\(named.joined(separator: ", "))\(stayed.count > 4 ? ", …" : "")): pages other processes map cannot be evicted;"
                    + " the runs read them warm (each run's residentBeforeBytes says how much)")
        }
        return residency
    }

    /// How much of the file at `path` is in the page cache now.
    static func residency(_ path: String) -> Residency {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return Residency(residentBytes: 0, totalBytes: 0) }
        defer { close(fd) }
        return measure(fd)
    }

    /// Bytes of the file that are in the page cache (mincore over a mapping of it).
    private static func measure(_ fd: Int32) -> Residency {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size > 0 else { return Residency(residentBytes: 0, totalBytes: 0) }
        let size = Int(status.st_size)
        let noneResident = Residency(residentBytes: 0, totalBytes: UInt64(size))
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else {
            return noneResident
        }
        defer { munmap(mapping, size) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let pages = (size + page - 1) / page
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(mapping, size, &vector) == 0 else { return noneResident }
        let residentPages = vector.reduce(0) { $0 + Int($1 & 1) }
        return Residency(residentBytes: UInt64(min(residentPages * page, size)), totalBytes: UInt64(size))
    }
}
