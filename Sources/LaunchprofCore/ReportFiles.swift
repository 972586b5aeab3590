import LaunchprofReport

#if canImport(Glibc)
    import Glibc
#endif

/// The file system side of reports (LaunchprofReport only sees bytes): reading reports for
/// compare, merge, export and `report`; writing bench folders and the exported documents
/// (MetricKit payloads, trace, HTML) whole or not at all, through `AtomicReportFile`.
public enum ReportFiles {
    /// The whole file, up to 1 GiB.
    public static func read(_ path: String) throws(LaunchReportError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw readFailure(path) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count < 1 << 30 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw readFailure(path)
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

    /// Writes `bytes` to `path` whole or not at all (see `OutputDestination`).
    public static func write(_ bytes: [UInt8], to path: String) throws(LaunchReportError) {
        try OutputDestination(path).write(bytes)
    }

    /// Writes `metrics.json` and `diagnostics.json` into `directory` (created if missing). Both
    /// are written to temporary files first and renamed only when both are complete.
    public static func writeMetricKit(
        metrics: [UInt8], diagnostics: [UInt8], directory: String
    ) throws(LaunchReportError) {
        // The folder itself is created, not its parents: a mistyped parent is an error.
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .fileOperationFailed(
                    operation: "write the MetricKit payloads into", path: directory, errno: ENOTDIR,
                    reason: "it is not a directory; name a directory (it is created if missing)")
            }
        } else if mkdir(directory, 0o755) != 0, errno != EEXIST {
            throw failure("create the MetricKit directory", directory)
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        let metricsFile = try OutputDestination(base + "metrics.json").open()
        let diagnosticsFile = try OutputDestination(base + "diagnostics.json").open()
        do {
            try metricsFile.write(metrics)
            try diagnosticsFile.write(diagnostics)
            try metricsFile.commit()
            try diagnosticsFile.commit()
        } catch {
            metricsFile.discard()
            diagnosticsFile.discard()
            throw error
        }
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

    private static func readFailure(_ path: String) -> LaunchReportError {
        let code = errno
        return .cannotRead(path: path, errno: code, reason: strerror(code).map { String(cString: $0) } ?? "errno \(code)")
    }

    private static func failure(_ operation: String, _ path: String) -> LaunchReportError {
        let code = errno
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return .fileOperationFailed(operation: operation, path: path, errno: code, reason: reason)
    }
}
