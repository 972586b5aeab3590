#if canImport(Glibc)
import Glibc
#endif

extension LoaderCache {
    /// Reads and parses the cache file at `path` (one read).
    public static func load(path: String) throws(ELFError) -> LoaderCache {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw errno == ENOENT ? .notFound(path: path) : .unreadable(path: path, errno: errno)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .unreadable(path: path, errno: errno) }
        let size = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + done }, size - done, off_t(done)) }
            guard got > 0 else { break }
            done += got
        }
        guard done == size else { throw .truncated(path: path, detail: "read \(done) of \(size) bytes") }
        do {
            return try LoaderCache(bytes: bytes)
        } catch {
            throw error.about(path)
        }
    }
}
