#if canImport(Glibc)
import Glibc
#endif

/// The app-to-launchprof hook channel of one run: a datagram socket pair. The child inherits one
/// end as `LAUNCHPROF_HOOK_FD`; each datagram holds text lines (see `launchprof.h`). Datagrams
/// keep each event whole, and a full buffer makes the app's non-blocking send fail instead of
/// blocking it.
struct HookChannel {
    let launchprofEnd: Int32
    let childEnd: Int32

    init() throws(RunError) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw .system(operation: "socketpair", errno: errno)
        }
        launchprofEnd = pair[0]
        childEnd = pair[1]
        // Room for bursts of hook calls while launchprof is busy elsewhere.
        var size: Int32 = 1 << 20
        setsockopt(launchprofEnd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    func close() {
        _ = Glibc.close(launchprofEnd)
        _ = Glibc.close(childEnd)
    }
}
