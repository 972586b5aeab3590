import CLaunchprof
import LaunchprofReport

#if canImport(Glibc)
    import Glibc
#endif

/// Where an output option's bytes go, decided from what is at the path before any work is done:
/// every `--json`, `--html`, `--trace`, `--folded`, `-o`, `--markdown` (and the files inside a
/// `--metrickit` or `--report` folder) goes through here, so no output destroys what it does
/// not own.
///
/// - an absent path or a regular file is replaced atomically (`AtomicReportFile`), keeping the
///   old file's permissions;
/// - a symbolic link is followed: the link stays, its target is written as above;
/// - `-`, a FIFO, a character device or a socket is written in place (opened without creating
///   or truncating), as one write of the complete document when it is committed;
/// - a link to one of launchprof's open descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
///   `/proc/self/fd/N`) is that descriptor, written in place whatever it is (a pipe, a terminal,
///   a file a shell redirected it to): never reopened, never replaced;
/// - a directory, a missing parent folder or an unwritable path is refused.
public struct OutputDestination: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Replaced atomically: the path to rename over (a link's target), and the mode to keep.
        case file(path: String, mode: mode_t?)
        /// Written in place: a device, a FIFO, a socket; nil for `-` (standard output).
        case stream(path: String?)
        /// Written in place to one of launchprof's open descriptors (other than stdout).
        case descriptor(Int32)
    }

    /// The path as the user gave it (for messages).
    public var path: String
    public var kind: Kind

    /// Classifies `path`; throws why it cannot be written (its errno, a reason that says what to do).
    public init(_ path: String) throws(LaunchReportError) {
        self.path = path
        if path == "-" {
            kind = .stream(path: nil)
            return
        }
        guard !path.isEmpty else { throw Self.refusal(path, ENOENT, "the path is empty; name a file") }
        if let descriptor = Self.openDescriptor(named: path) {
            // Renaming a file over /dev/stdout replaced that link for the whole machine (where
            // stdout was a deleted file, realpath had no name for it to write instead).
            guard fcntl(descriptor, F_GETFL) >= 0 else { throw Self.refusal(path, EBADF, "descriptor \(descriptor) is not open") }
            kind = descriptor == 1 ? .stream(path: nil) : .descriptor(descriptor)
            return
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            guard code == ENOENT else { throw Self.refusal(path, code, Self.reason(code)) }
            try Self.checkParent(of: path, for: path)
            kind = .file(path: path, mode: nil)
            return
        }
        var resolved = path
        if info.st_mode & S_IFMT == S_IFLNK {
            guard stat(path, &info) == 0 else {
                let code = errno
                guard code == ENOENT else { throw Self.refusal(path, code, Self.reason(code)) }
                // A dangling link: its target is created, the link kept.
                resolved = try Self.danglingTarget(of: path)
                try Self.checkParent(of: resolved, for: path)
                kind = .file(path: resolved, mode: nil)
                return
            }
            if info.st_mode & S_IFMT == S_IFREG {
                // The link stays; its target is replaced. A target without a name (deleted)
                // cannot be: renaming over the path would replace the link itself.
                guard let real = realpath(path, nil) else {
                    throw Self.refusal(path, errno, "it links to a file without a path (\(Self.reason(errno)))")
                }
                resolved = String(cString: real)
                free(real)
            }
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            try Self.checkParent(of: resolved, for: path)
            if access(resolved, W_OK) != 0 { throw Self.refusal(path, errno, Self.reason(errno)) }
            kind = .file(path: resolved, mode: info.st_mode & 0o7777)
        case S_IFDIR:
            throw Self.refusal(path, EISDIR, "it is a directory; name a file in it")
        case S_IFCHR, S_IFIFO, S_IFSOCK:
            // Opened through the path the user gave: the kernel follows /dev/stdout's links.
            if access(path, W_OK) != 0 { throw Self.refusal(path, errno, Self.reason(errno)) }
            kind = .stream(path: path)
        default:
            throw Self.refusal(path, EINVAL, "it is a block device; name a file")
        }
    }

    /// Whether the bytes end up on launchprof's own standard output (`-`, `/dev/stdout`, or the
    /// file or pipe stdout is), so a command can move its text off stdout.
    public var isStandardOutput: Bool {
        let target: String
        var info = stat()
        switch kind {
        case .stream(nil): return true
        case .stream(let path?): target = path
        case .file(let path, _): target = path
        case .descriptor(let descriptor):
            guard fstat(descriptor, &info) == 0 else { return false }
            target = "/proc/self/fd/\(descriptor)"
        }
        var out = stat()
        guard stat(target, &info) == 0, fstat(1, &out) == 0 else { return false }
        return info.st_dev == out.st_dev && info.st_ino == out.st_ino
    }

    /// Whether `other` writes to the same place: the same file, node or pipe (two documents on
    /// one stream would be concatenated; two replacements of one file would lose the first).
    /// `/dev/null` is no place: any number of outputs may be thrown away there.
    public func writesToSamePlace(as other: OutputDestination) -> Bool {
        guard let mine = placeIdentity, let theirs = other.placeIdentity else { return false }
        return mine == theirs
    }

    /// Whether writing here would replace or write into the file at `input` (the same file,
    /// reached by any name or link): an output must never destroy what the command reads.
    public func overwrites(_ input: String) -> Bool {
        var info = stat()
        guard stat(input, &info) == 0, let mine = placeIdentity else { return false }
        return mine == "inode:\(info.st_dev):\(info.st_ino)"
    }

    /// "stdout" for what ends on launchprof's standard output (`-` always, whatever stdout is),
    /// else the device and inode written to, else the path to create; nil for `/dev/null`.
    private var placeIdentity: String? {
        var info = stat()
        let target: String
        switch kind {
        case .stream(nil): return "stdout"
        case .stream(let path?): target = path
        case .file(let path, _): target = path
        case .descriptor(let descriptor): target = "/proc/self/fd/\(descriptor)"
        }
        guard stat(target, &info) == 0 else { return "path:" + target }
        var null = stat()
        if info.st_mode & S_IFMT == S_IFCHR, stat("/dev/null", &null) == 0, info.st_rdev == null.st_rdev { return nil }
        if isStandardOutput { return "stdout" }
        return "inode:\(info.st_dev):\(info.st_ino)"
    }

    /// An output that writes here (see the type's description).
    public func open() throws(LaunchReportError) -> any ReportOutput {
        switch kind {
        case .file(let target, let mode):
            return try AtomicReportFile(path: target, displayPath: path, mode: mode)
        case .stream(let streamPath):
            return StreamReportOutput(path: path, device: streamPath)
        case .descriptor(let descriptor):
            return StreamReportOutput(path: path, descriptor: descriptor)
        }
    }

    /// Writes `bytes` here, whole or not at all.
    public func write(_ bytes: [UInt8]) throws(LaunchReportError) {
        let output = try open()
        do {
            try output.write(bytes)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// Checks a folder an output creates files in (`--metrickit DIR`, `calibrate --report DIR`,
    /// `bench --output DIR`): an existing writable directory, or absent with a writable parent
    /// (`createParents`: with the nearest existing ancestor writable).
    public static func checkFolder(_ path: String, createParents: Bool = false) throws(LaunchReportError) {
        guard !path.isEmpty else { throw refusal(path, ENOENT, "the path is empty; name a folder") }
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw refusal(path, ENOTDIR, "it is not a directory; name a folder (it is created if missing)")
            }
            if access(path, W_OK | X_OK) != 0 { throw refusal(path, errno, reason(errno)) }
            return
        }
        guard errno == ENOENT else { throw refusal(path, errno, reason(errno)) }
        var parent = directory(of: path)
        if createParents {
            while stat(parent, &info) != 0, errno == ENOENT, parent != "/" && parent != "." {
                parent = directory(of: parent)
            }
        }
        guard stat(parent, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw refusal(path, ENOENT, "its parent folder '\(parent)' does not exist; create it first")
        }
        if access(parent, W_OK | X_OK) != 0 {
            throw refusal(path, errno, "its parent folder '\(parent)' is not writable (\(reason(errno)))")
        }
    }

    private static func checkParent(of resolved: String, for path: String) throws(LaunchReportError) {
        let parent = directory(of: resolved)
        var info = stat()
        guard stat(parent, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw refusal(path, ENOENT, "the folder '\(parent)' does not exist; create it first")
        }
        // The atomic replacement creates a temporary file beside the target.
        if access(parent, W_OK | X_OK) != 0 {
            throw refusal(path, errno, "the folder '\(parent)' is not writable (\(reason(errno)))")
        }
    }

    /// The descriptor `path` names when it, or a link it leads through, is `/proc/self/fd/N`,
    /// `/proc/PID/fd/N` of this process, or `/dev/fd/N`.
    static func openDescriptor(named path: String) -> Int32? {
        var current = path
        for _ in 0..<40 {
            for prefix in ["/proc/self/fd/", "/proc/\(getpid())/fd/", "/dev/fd/"] where current.hasPrefix(prefix) {
                if let number = Int32(current.dropFirst(prefix.count)), number >= 0 { return number }
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let text = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = text.hasPrefix("/") ? text : directory(of: current) + "/" + text
        }
        return nil
    }

    /// The path a chain of links ends at when its last target does not exist.
    private static func danglingTarget(of path: String) throws(LaunchReportError) -> String {
        var resolved = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(resolved, &info) == 0 else { return resolved }
            guard info.st_mode & S_IFMT == S_IFLNK else { return resolved }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(resolved, &buffer, buffer.count - 1)
            guard count >= 0 else { throw refusal(path, errno, reason(errno)) }
            let text = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            resolved = text.hasPrefix("/") ? text : directory(of: resolved) + "/" + text
        }
        throw refusal(path, ELOOP, "too many levels of symbolic links")
    }

    static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    static func refusal(_ path: String, _ code: Int32, _ reason: String) -> LaunchReportError {
        .fileOperationFailed(operation: "write to", path: path, errno: code, reason: reason)
    }

    static func reason(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }
}

/// A device, FIFO or standard output written in place: the bytes are kept until `commit`, then
/// written at once, so a failed run leaves nothing half-written there either.
final class StreamReportOutput: ReportOutput {
    let path: String
    /// nil: standard output.
    private let device: String?
    /// Written to as it is, never opened or closed here (nil: `device`, or standard output).
    private let descriptor: Int32?
    private var bytes: [UInt8] = []
    private var closed = false

    init(path: String, device: String?) {
        self.path = path
        self.device = device
        self.descriptor = nil
    }

    init(path: String, descriptor: Int32) {
        self.path = path
        self.device = nil
        self.descriptor = descriptor
    }

    func write(_ more: [UInt8]) throws(LaunchReportError) {
        guard !closed else { throw .writerClosed(path: path) }
        bytes += more
    }

    func commit() throws(LaunchReportError) {
        guard !closed else { throw .writerClosed(path: path) }
        closed = true
        var fd: Int32 = descriptor ?? 1
        if let device {
            // No O_CREAT, no O_TRUNC: the node is written, never replaced.
            // A FIFO's open waits for a reader; Ctrl-C or SIGTERM ends that wait (EINTR).
            repeat { fd = open(device, O_WRONLY | O_CLOEXEC | O_NOCTTY) } while fd < 0 && errno == EINTR && lp_interrupted() == 0
            guard fd >= 0 else {
                if errno == EINTR { throw .interrupted(path: path) }
                throw OutputDestination.refusal(path, errno, OutputDestination.reason(errno))
            }
        }
        defer { if device != nil { close(fd) } }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                throw .writeFailed(path: device == nil && descriptor == nil ? "-" : path, errno: code, reason: String(cString: strerror(code)))
            }
            offset += written
        }
        bytes = []
    }

    func discard() {
        closed = true
        bytes = []
    }
}
