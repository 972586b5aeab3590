#if canImport(Glibc)
import Glibc
#endif

/// A directory no other user can write, held open: where launchprof's sockets live. Paths in it
/// are reached through the open descriptor (`/proc/self/fd/N/NAME`), so the directory checked is
/// the one used even if its path is renamed or replaced after the check.
///
/// Trusted when it is a real directory (not a symbolic link), owned by this process's effective
/// user and writable by no group or other user: then only that user (or root) can bind a socket
/// in it, and a socket found there was bound by them.
public final class PrivateDirectory: Sendable {
    public let path: String
    /// An `O_PATH` descriptor of the directory.
    public let descriptor: Int32

    /// Why a directory cannot be trusted.
    public struct Untrusted: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path) \(reason)" }
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Opens `path`, creating it (mode 0700) when `create` and it is missing, and checks it.
    public static func open(_ path: String, create: Bool) throws(Untrusted) -> PrivateDirectory {
        if create, mkdir(path, 0o700) != 0, errno != EEXIST {
            throw Untrusted(path: path, reason: "cannot be created (\(errnoText(errno)))")
        }
        let descriptor = Glibc.open(path, Self.openPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            throw Untrusted(
                path: path,
                reason: error == ELOOP || error == ENOTDIR ? "is not a directory (a symbolic link or a file)" : "cannot be opened (\(errnoText(error)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = errno
            Glibc.close(descriptor)
            throw Untrusted(path: path, reason: "cannot be read (\(errnoText(error)))")
        }
        if let reason = problem(owner: status.st_uid, mode: status.st_mode) {
            Glibc.close(descriptor)
            throw Untrusted(path: path, reason: reason)
        }
        return PrivateDirectory(path: path, descriptor: descriptor)
    }

    /// Why a directory with this owner and mode is not private to this user, or nil.
    static func problem(owner: uid_t, mode: mode_t) -> String? {
        if owner != geteuid() { return "belongs to uid \(owner), not to uid \(geteuid())" }
        if mode & 0o022 != 0 { return "can be written by other users (mode \(String(mode & 0o7777, radix: 8)))" }
        return nil
    }

    /// `name` in this directory as a path any system call accepts (at most 108 bytes for a
    /// socket address, whatever the directory's own path).
    public func entry(_ name: String) -> String { "/proc/self/fd/\(descriptor)/\(name)" }

    /// The directory launchprof's root helpers use for this user: `/run/launchprof` for root,
    /// `$XDG_RUNTIME_DIR/launchprof` or `/tmp/launchprof-UID` for another user.
    public static var standardPath: String {
        let uid = geteuid()
        if uid == 0, access("/run", W_OK) == 0 { return "/run/launchprof" }
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            return runtime + "/launchprof"
        }
        return "/tmp/launchprof-\(uid)"
    }

    /// O_PATH (Glibc hides it behind _GNU_SOURCE): a descriptor that names the directory only.
    private static let openPath: Int32 = 0o10000000

    private static func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
