import CLaunchprof
import LaunchprofReport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A report file that appears complete or not at all. Bytes go to a file without a name in the
/// destination directory (O_TMPFILE: the same file system, so the final rename is atomic);
/// `commit` links it in as `<path>.tmp-XXXXXX` and at once renames that over `path`; `discard`
/// closes it. Whatever stops launchprof — Ctrl-C, a crash, a failed run, SIGKILL — the report is
/// whole or absent, and no temporary file is left behind: an unnamed file goes with its last
/// descriptor (a SIGKILLed `run -r 100000` used to leave a growing `r.json.tmp-XXXX`). On a file
/// system without O_TMPFILE the temporary is named from the start, and a SIGKILL leaves it.
/// It is not fsynced: surviving a power loss is not promised, and an fsync here cost ~150 ms on
/// our machines, more than hyperfine's whole 200-run measurement.
///
/// It lives in Core, beside the sessions, so that LaunchprofReport stays free of system calls.
public final class AtomicReportFile: ReportOutput {
    public let path: String
    /// The temporary file's name while it has one: from the start without O_TMPFILE, else only
    /// between `commit`'s link and rename.
    public private(set) var temporaryPath: String?

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
        let unnamed = lp_open_unnamed_file(OutputDestination.directory(of: path), UInt32(mode ?? 0o644))
        if unnamed >= 0 {
            descriptor = unnamed
        } else {
            // EOPNOTSUPP, EISDIR: a file system or kernel without O_TMPFILE.
            let named = try Self.namedTemporary(beside: path, displayPath: displayPath ?? path)
            descriptor = named.fd
            temporaryPath = named.path
        }
        // A report is an ordinary readable file (mkstemp makes 0600; O_TMPFILE applies umask).
        _ = fchmod(descriptor, mode ?? 0o644)
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
                throw Self.writeFailure(displayPath)
            }
            offset += written
        }
        pending.removeAll(keepingCapacity: true)
    }

    public func commit() throws(LaunchReportError) {
        guard descriptor >= 0 else { throw .writerClosed(path: path) }
        do throws(LaunchReportError) {
            try flush()
            // An unnamed file gets its name only now: linkat cannot replace `path`, rename can.
            if temporaryPath == nil { temporaryPath = try Self.link(descriptor, beside: path, displayPath: displayPath) }
        } catch {
            discard()
            throw error
        }
        let fd = descriptor
        descriptor = -1
        guard let named = temporaryPath else { return }
        temporaryPath = nil
        // Some file systems (NFS) report a failed write only when the file is closed.
        if close(fd) != 0 {
            let failure = Self.writeFailure(displayPath)
            unlink(named)
            throw failure
        }
        if rename(named, path) != 0 {
            let failure = Self.failure("rename the finished report to", displayPath)
            unlink(named)
            throw failure
        }
    }

    public func discard() {
        guard descriptor >= 0 else { return }
        pending = []
        close(descriptor)
        descriptor = -1
        if let temporaryPath { unlink(temporaryPath) }
        temporaryPath = nil
    }

    /// `<path>.tmp-XXXXXX`, created and open for writing.
    private static func namedTemporary(beside path: String, displayPath: String) throws(LaunchReportError) -> (fd: Int32, path: String) {
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            let fd = mkstemp(base)
            if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return fd
        }
        guard fd >= 0 else { throw failure("create a temporary file for", displayPath) }
        return (fd, String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Links the unnamed file open as `fd` in as a fresh `<path>.tmp-XXXXXX` (through /proc, which
    /// needs no privilege, unlike AT_EMPTY_PATH); the name it got.
    private static func link(_ fd: Int32, beside path: String, displayPath: String) throws(LaunchReportError) -> String {
        for _ in 0..<16 {
            var suffix = ""
            for _ in 0..<6 { suffix.append("abcdefghijklmnopqrstuvwxyz0123456789".randomElement()!) }
            let name = path + ".tmp-" + suffix
            if linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0 { return name }
            guard errno == EEXIST else { break }
        }
        throw failure("name the finished report beside", displayPath)
    }

    private static func writeFailure(_ path: String) -> LaunchReportError {
        let code = errno
        return .writeFailed(path: path, errno: code, reason: strerror(code).map { String(cString: $0) } ?? "errno \(code)")
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
