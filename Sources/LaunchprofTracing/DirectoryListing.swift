#if canImport(Glibc)
import Glibc
#endif

/// The names in a directory (/proc, a cgroup, a cache), read with readdir.
public enum DirectoryListing {
    /// Every entry's name but `.` and `..`, in the directory's order; nil when it cannot be opened.
    public static func names(_ path: String) -> [String]? {
        guard let stream = opendir(path) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
