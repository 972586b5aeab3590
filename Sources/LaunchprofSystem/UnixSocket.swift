#if canImport(Glibc)
import Glibc
#endif

/// Unix stream sockets by path, and who is at the other end as the kernel saw it.
public enum UnixSocket {
    /// A failed system call's errno.
    public struct Failure: Error, Equatable {
        public var errno: Int32

        public init(errno: Int32) { self.errno = errno }
    }

    /// The process at the other end of a connection when it connected or listened
    /// (SO_PEERCRED): vouched for by the kernel, not by anything the peer says.
    public struct Peer: Equatable, Sendable {
        public var pid: Int32
        public var uid: uid_t
        public var gid: gid_t

        public init(pid: Int32, uid: uid_t, gid: gid_t) {
            self.pid = pid
            self.uid = uid
            self.gid = gid
        }
    }

    /// A connected descriptor, or the errno of the failure.
    public static func connect(_ path: String) -> Result<Int32, Failure> {
        guard var address = address(path) else { return .failure(Failure(errno: ENAMETOOLONG)) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(errno: errno)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            return .failure(Failure(errno: error))
        }
        return .success(fd)
    }

    /// A descriptor bound to `path` and listening, or the errno of the failure.
    public static func listen(_ path: String, backlog: Int32 = 64) -> Result<Int32, Failure> {
        guard var address = address(path) else { return .failure(Failure(errno: ENAMETOOLONG)) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(errno: errno)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let error = errno
            close(fd)
            return .failure(Failure(errno: error))
        }
        return .success(fd)
    }

    public static func peer(_ fd: Int32) -> Peer? {
        // struct ucred: pid_t, uid_t, gid_t (Glibc hides it behind _GNU_SOURCE).
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return Peer(pid: credentials.0, uid: credentials.1, gid: credentials.2)
    }

    private static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }
}
