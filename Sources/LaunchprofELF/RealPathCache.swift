#if canImport(Glibc)
import Glibc
#endif

/// Resolves symlinks like `realpath(3)`, remembering resolved directories: a closure's
/// libraries share a few directories, and `realpath` re-reads every component of every path
/// (a third of inspect's system calls on gdb).
final class RealPathCache {
    private var directories: [String: String] = [:]

    /// The canonical path of `path` (itself when it cannot be resolved).
    func resolve(_ path: String) -> String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return RealPathCache.realPath(path) }
        var directory = String(path[..<slash])
        var name = String(path[path.index(after: slash)...])
        // A symlink in the same directory (libz.so.1 → libz.so.1.2.13) needs only readlink.
        for _ in 0..<40 {
            let resolvedDirectory = resolveDirectory(directory)
            let candidate = resolvedDirectory + "/" + name
            guard let target = RealPathCache.readLink(candidate) else { return candidate }
            guard !target.contains("/") else { return RealPathCache.realPath(path) }
            directory = resolvedDirectory
            name = target
        }
        return RealPathCache.realPath(path)
    }

    private func resolveDirectory(_ directory: String) -> String {
        if let known = directories[directory] { return known }
        let resolved = directory.isEmpty ? "" : RealPathCache.realPath(directory)
        directories[directory] = resolved
        return resolved
    }

    /// The target of a symlink, or nil when `path` is not one.
    private static func readLink(_ path: String) -> String? {
        // On the stack: a fresh 4 KiB heap block per call is a page faulted in now and then.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(PATH_MAX)) { buffer in
            let count = readlink(path, buffer.baseAddress!, buffer.count)
            guard count > 0, count < buffer.count else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
