import Glibc
import LaunchprofReport

/// Writes the exported documents (MetricKit payloads, trace, HTML) whole or not at all, through
/// `AtomicReportFile`.
public enum ReportFiles {
    /// Writes `bytes` to `path` atomically.
    public static func write(_ bytes: [UInt8], to path: String) throws(LaunchReportError) {
        let file = try AtomicReportFile(path: path)
        do {
            try file.write(bytes)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }

    /// Writes `metrics.json` and `diagnostics.json` into `directory` (created if missing). Both
    /// are written to temporary files first and renamed only when both are complete.
    public static func writeMetricKit(
        metrics: [UInt8], diagnostics: [UInt8], directory: String
    ) throws(LaunchReportError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .fileOperationFailed(
                    operation: "write the MetricKit payloads into", path: directory, errno: ENOTDIR,
                    reason: "it is not a directory; name a directory (it is created if missing)")
            }
        } else if mkdir(directory, 0o755) != 0, errno != EEXIST {
            let code = errno
            throw .fileOperationFailed(
                operation: "create the MetricKit directory", path: directory, errno: code,
                reason: String(cString: strerror(code)))
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        let metricsFile = try AtomicReportFile(path: base + "metrics.json")
        let diagnosticsFile = try AtomicReportFile(path: base + "diagnostics.json")
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
}
