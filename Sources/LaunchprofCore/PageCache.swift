#if canImport(Glibc)
import Glibc
#endif

/// `--cold`: evicts the closure's files from the page cache before a run and measures how much
/// of them stayed resident, so "cold" is a measurement, not an assumption. Pages mapped by a
/// live process (libc.so.6, usually) cannot be evicted by an ordinary user; as root, launchprof
/// also drops the whole clean page cache.
enum PageCache {
    struct Residency: Sendable {
        var residentBytes: UInt64
        var totalBytes: UInt64
    }

    static func evict(_ paths: [String]) -> Residency {
        if geteuid() == 0 {
            sync()
            let fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)
            if fd >= 0 {
                _ = write(fd, "1\n", 2)
                close(fd)
            }
        }
        var residency = Residency(residentBytes: 0, totalBytes: 0)
        for path in Set(paths) {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            let file = measure(fd)
            residency.residentBytes += file.residentBytes
            residency.totalBytes += file.totalBytes
        }
        return residency
    }

    /// How much of the file at `path` is in the page cache now.
    static func residency(_ path: String) -> Residency {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
