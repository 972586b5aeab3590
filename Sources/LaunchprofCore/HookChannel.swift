#if canImport(Glibc)
import Glibc
#endif

/// The app-to-launchprof hook channel of one run: a Unix stream socket pair carrying text lines
/// (see `launchprof.h`). The child inherits one end as `LAUNCHPROF_HOOK_FD`. A stream, not
/// datagrams: Linux queues at most ten datagrams on a Unix socket (net.unix.max_dgram_qlen), so
/// a burst of hook calls would lose events; a stream queues hundreds of kilobytes of lines, and
/// a full buffer makes the app's non-blocking send fail instead of blocking it.
struct HookChannel {
    let launchprofEnd: Int32
    let childEnd: Int32

    init() throws(RunError) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw .system(operation: "socketpair", errno: errno)
        }
        launchprofEnd = pair[0]
        childEnd = pair[1]
        // Room for bursts of hook calls while launchprof is busy elsewhere.
        var size: Int32 = 1 << 20
        setsockopt(launchprofEnd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(childEnd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    func close() {
        _ = Glibc.close(launchprofEnd)
        _ = Glibc.close(childEnd)
    }
}
