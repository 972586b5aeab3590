import LaunchprofReport

#if canImport(Glibc)
    import Glibc
#endif

/// Reading reports and writing bench folders: the file system side of bench, compare, merge
/// and export (LaunchprofReport only sees bytes).
public enum ReportFiles {
    /// The whole file, up to 1 GiB.
    public static func read(_ path: String) throws(LaunchReportError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("read", path) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count < 1 << 30 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// A launch report from a file, its schema version checked.
    public static func readReport(_ path: String) throws(LaunchReportError) -> LaunchReport {
        try LaunchReportDecoder.decode(read(path), path: path)
    }

    /// Writes `bytes` to `path` whole or not at all.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(LaunchReportError) {
        let file = try AtomicReportFile(path: path)
        try file.write(bytes)
        try file.commit()
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// `mkdir -p`.
    public static func makeDirectory(_ path: String) throws(LaunchReportError) {
        if isDirectory(path) { return }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST { throw failure("create the folder", prefix) }
        }
        guard isDirectory(path) else {
            throw .fileOperationFailed(operation: "create the folder", path: path, errno: ENOTDIR, reason: "a file is in the way")
        }
    }

    private static func failure(_ operation: String, _ path: String) -> LaunchReportError {
        let code = errno
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return .fileOperationFailed(operation: operation, path: path, errno: code, reason: reason)
    }
}
