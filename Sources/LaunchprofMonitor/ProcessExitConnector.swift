#if canImport(Glibc)
import Glibc
#endif

/// Every process's exit with its status, from the kernel's process events connector (netlink,
/// `CONFIG_PROC_EVENTS`): no tracepoint gives the exit status, and a probe on libc's `_exit` would
/// cost every process on the machine a probe page. The kernel sends one small message per exiting
/// task to listeners only; on Linux 6.6 and later it sends this socket exits alone.
///
/// Messages come from the kernel (the socket takes no other sender) but are parsed with every
/// length checked all the same. A full receive buffer loses messages; the kernel says so
/// (ENOBUFS) without saying how many, so `overruns` counts the times it happened.
public final class ProcessExitConnector: @unchecked Sendable {
    public let descriptor: Int32
    /// Times the receive buffer overflowed (each at least one exit lost).
    public private(set) var overruns: UInt64 = 0
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    private static let netlinkConnector: Int32 = 11
    private static let procIndex: UInt32 = 1
    private static let listen: UInt32 = 1
    private static let ignore: UInt32 = 2
    private static let exitEvent: UInt32 = 0x8000_0000

    public init() throws(MonitorError) {
        let fd = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), Self.netlinkConnector)
        guard fd >= 0 else { throw .kernelEvent(what: "the process events connector", errno: errno) }
        var size: Int32 = 8 << 20
        // Root may size the buffer past rmem_max; elsewhere the ordinary limit applies.
        if setsockopt(fd, SOL_SOCKET, 33 /* SO_RCVBUFFORCE */, &size, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // sockaddr_nl: family (u16), pad (u16), pid (u32: 0, the kernel picks), groups (u32).
        let address = [UInt8(AF_NETLINK), 0, 0, 0] + Self.bytes(0) + Self.bytes(Self.procIndex)
        let bound = address.withUnsafeBytes {
            bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw .kernelEvent(what: "the process events connector", errno: error)
        }
        descriptor = fd
        let error = control(Self.listen)
        guard error == 0 else {
            close(fd)
            throw .kernelEvent(what: "the process events connector", errno: error)
        }
    }

    deinit {
        _ = control(Self.ignore)
        close(descriptor)
    }

    /// Whether the kernel filters events per listener (Linux 6.6: `struct proc_input`).
    static func filtersByEvent(release: String) -> Bool {
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return numbers[0] > 6 || (numbers[0] == 6 && numbers[1] >= 6)
    }

    /// Asks the kernel to start (or stop) sending process events: a connector message whose
    /// payload is the operation, and on kernels that filter, the one event wanted.
    private func control(_ operation: UInt32) -> Int32 {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var payload = Self.bytes(operation)
        if Self.filtersByEvent(release: release) { payload += Self.bytes(Self.exitEvent) }
        // cn_msg: id (idx, val), seq, ack, len (u16), flags (u16), then the payload.
        var message = Self.bytes(Self.procIndex) + Self.bytes(1) + Self.bytes(0) + Self.bytes(0)
        message += [UInt8(payload.count & 0xff), UInt8(payload.count >> 8), 0, 0] + payload
        // nlmsghdr: len, type NLMSG_DONE (3), flags 0, seq 0, pid (this process).
        let length = UInt32(16 + message.count)
        let packet = Self.bytes(length) + [3, 0, 0, 0] + Self.bytes(0) + Self.bytes(UInt32(getpid())) + message
        let sent = packet.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        return sent < 0 ? errno : 0
    }

    private static func bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24)]
    }

    /// Every exit waiting on the socket, as `exited` events of processes (a thread's own exit is
    /// not one).
    public func read() -> [FieldEvent] {
        var events: [FieldEvent] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == ENOBUFS {
                    overruns += 1
                    continue
                }
                break
            }
            if count == 0 { break }
            events += Self.parse(buffer[..<count])
        }
        return events
    }

    /// The process exits in one datagram of netlink messages (`nlmsghdr`, `cn_msg`,
    /// `proc_event`); anything that does not fit is skipped.
    public static func parse(_ datagram: ArraySlice<UInt8>) -> [FieldEvent] {
        let bytes = Array(datagram)
        func u32(_ at: Int) -> UInt32? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u64(_ at: Int) -> UInt64? {
            guard let low = u32(at), let high = u32(at + 4) else { return nil }
            return UInt64(low) | UInt64(high) << 32
        }
        var events: [FieldEvent] = []
        var at = 0
        while let length = u32(at), length >= 16, at + Int(length) <= bytes.count {
            // nlmsghdr (16) + cn_msg (20) + proc_event: what, cpu, timestamp (8), exit's
            // pid, tgid, code, signal.
            let event = at + 36
            if let index = u32(at + 16), index == procIndex, Int(length) >= 36 + 40,
                let what = u32(event), what == exitEvent, let time = u64(event + 8),
                let pid = u32(event + 16), let tgid = u32(event + 20), let code = u32(event + 24), pid == tgid
            {
                events.append(.exited(pid: Int32(bitPattern: pid), status: Int32(bitPattern: code), atNs: time))
            }
            at += (Int(length) + 3) & ~3
        }
        return events
    }
}
