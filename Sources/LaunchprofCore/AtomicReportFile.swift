import LaunchprofReport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A report file that appears complete or not at all: bytes go to `<path>.tmp-XXXXXX` in the
/// destination directory (same file system, so the rename is atomic), `commit` renames it over
/// `path`, `discard` unlinks it. Whatever stops launchprof (Ctrl-C, a crash, a failed run), the
/// report is whole or absent. It is not fsynced: surviving a power loss is not promised, and an
/// fsync here cost ~150 ms on our machines, more than hyperfine's whole 200-run measurement.
///
/// It lives in Core, beside the sessions, so that LaunchprofReport stays free of system calls.
public final class AtomicReportFile: ReportOutput {
    public let path: String
    /// The temporary file being written.
    public let temporaryPath: String

    /// The path named in messages (a link to `path`, say).
    private let displayPath: String
    private var descriptor: Int32
    /// Bytes not written yet: a report streams a line per run, written 64 KiB at a time rather
    /// than a system call per run (the file is renamed into place whole anyway).
    private var pending: [UInt8] = []
    private static let flushBytes = 1 << 16

    /// Creates the temporary file next to `path`; the finished file gets `mode` (the permissions
    /// of the file it replaces), else 0644. Use `OutputDestination` to reach here from a path a
    /// user gave: it follows links and writes devices in place.
    public init(path: String, displayPath: String? = nil, mode: mode_t? = nil) throws(LaunchReportError) {
        self.path = path
        self.displayPath = displayPath ?? path
        // A directory there would only fail at the rename, after every run: say so now.
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw .fileOperationFailed(
                operation: "write the report to", path: path, errno: EISDIR,
                reason: "it is a directory; name a file")
        }
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard fd >= 0 else { throw Self.failure("create a temporary file for", displayPath ?? path) }
        descriptor = fd
        temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // mkstemp creates 0600; a report is an ordinary readable file.
        _ = fchmod(fd, mode ?? 0o644)
    }

    deinit {
        discard()
    }

    public func write(_ bytes: [UInt8]) throws(LaunchReportError) {
        guard descriptor >= 0 else { throw .writerClosed(path: path) }
        pending += bytes
        if pending.count >= Self.flushBytes { try flush() }
    }

    private func flush() throws(LaunchReportError) {
        var offset = 0
        while offset < pending.count {
            let written = pending.withUnsafeBytes { raw in
                writeToDescriptor(descriptor, raw.baseAddress.map { $0 + offset }, pending.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", temporaryPath)
            }
            offset += written
        }
        pending.removeAll(keepingCapacity: true)
    }

    public func commit() throws(LaunchReportError) {
        guard descriptor >= 0 else { throw .writerClosed(path: path) }
        do throws(LaunchReportError) {
            try flush()
        } catch {
            discard()
            throw error
        }
        let fd = descriptor
        descriptor = -1
        if close(fd) != 0 {
            let failure = Self.failure("close", temporaryPath)
            unlink(temporaryPath)
            throw failure
        }
        if rename(temporaryPath, path) != 0 {
            let failure = Self.failure("rename the finished report to", displayPath)
            unlink(temporaryPath)
            throw failure
        }
    }

    public func discard() {
        guard descriptor >= 0 else { return }
        pending = []
        close(descriptor)
        descriptor = -1
        unlink(temporaryPath)
    }

    private static func failure(_ operation: String, _ path: String) -> LaunchReportError {
        let code = errno
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return .fileOperationFailed(operation: operation, path: path, errno: code, reason: reason)
    }
}

/// `write(2)`, under a name the class's own `write(_:)` does not shadow.
private func writeToDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, bytes, count)
}

extension LaunchReportWriter {
    /// A writer that streams the report to `path` (see `OutputDestination`).
    public convenience init(
        path: String, target: LaunchReport.Target, host: LaunchReport.Host,
        mode: LaunchReport.Mode
    ) throws(LaunchReportError) {
        try self.init(output: OutputDestination(path).open(), target: target, host: host, mode: mode)
    }
}
