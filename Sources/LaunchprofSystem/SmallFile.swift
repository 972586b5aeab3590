#if canImport(Glibc)
import Glibc
#endif

/// Reads the small text files launchprof consults (/proc, /sys, /etc/os-release, a compiler's
/// log): whole, up to 1 MiB. /proc files report size 0, so they are read until EOF.
public enum SmallFile {
    public static func read(_ path: String) -> String? {
        bytes(path, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The first `limit` bytes of the file (all of it when shorter); nil when it cannot be opened.
    public static func bytes(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, limit - bytes.count)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }
}
