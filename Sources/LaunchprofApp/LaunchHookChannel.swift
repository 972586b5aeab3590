import LaunchprofHooks

#if canImport(Glibc)
    import Glibc
#endif

/// The app's end of launchprof's hook channel (the protocol is documented in `launchprof.h`):
/// Swift's counterpart of the C hooks, speaking the same lines over the same socket.
///
/// Calls never block, never fail, never raise SIGPIPE and leave `errno` alone. Without launchprof
/// (no `LAUNCHPROF_HOOK_FD`) they return at once, after firing the hook's USDT probe (`launchprof.h`:
/// a `nop` unless `launchprof monitor`, perf or bpftrace listens).
public struct LaunchHookChannel: Sendable {
    /// The hook socket to send on; -1 when launchprof is not listening.
    public let descriptor: Int32

    /// A channel on a descriptor you own (tests, or an app that set up its own socket).
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The channel named by `LAUNCHPROF_HOOK_FD`, read once per process.
    public static let environment = LaunchHookChannel(
        descriptor: descriptor(from: getenv("LAUNCHPROF_HOOK_FD").map { String(cString: $0) }))

    /// The descriptor named by the variable's value, if it is a socket; else -1, so a
    /// stale variable never sends lines into a file or a stream the program reuses that number
    /// for.
    static func descriptor(from text: String?) -> Int32 {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let value = Int32(text)
        else { return -1 }
        let saved = errno
        defer { errno = saved }
        var type: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(value, SOL_SOCKET, SO_TYPE, &type, &size) == 0,
            type == Int32(SOCK_STREAM.rawValue) || type == Int32(SOCK_DGRAM.rawValue)
        else { return -1 }
        return value
    }

    /// What `environment` would choose for a variable's value (for tests).
    public static func descriptorForTesting(_ text: String?) -> Int32 {
        descriptor(from: text)
    }

    /// Starts the app phase `phase` ("willFinishLaunching", "restoreState",
    /// "didFinishLaunching", or any name). The corresponding C function is `launchprof_begin`.
    public func begin(_ phase: String) {
        phase.withCString { launchprof_usdt_fire_begin($0) }
        send("begin", phase)
    }

    /// Ends the app phase `phase`. The corresponding C function is `launchprof_end`.
    public func end(_ phase: String) {
        phase.withCString { launchprof_usdt_fire_end($0) }
        send("end", phase)
    }

    /// The first frame is on screen. The corresponding C function is `launchprof_first_frame`.
    public func firstFrame() {
        launchprof_usdt_fire_first_frame()
        send("first-frame", nil)
    }

    /// Launch goes on until `taskID` finishes (like MetricKit's
    /// `extendLaunchMeasurement(forTaskID:)`). The corresponding C function is
    /// `launchprof_extend_launch`.
    public func extendLaunch(taskID: String) {
        taskID.withCString { launchprof_usdt_fire_extend($0) }
        send("extend", taskID)
    }

    /// `taskID` finished. The corresponding C function is `launchprof_finish_extended_launch`.
    public func finishExtendedLaunch(taskID: String) {
        taskID.withCString { launchprof_usdt_fire_finish_extend($0) }
        send("finish-extend", taskID)
    }

    /// Times `body` as the app phase `phase`.
    public func measure<Result>(_ phase: String, _ body: () throws -> Result) rethrows -> Result {
        begin(phase)
        defer { end(phase) }
        return try body()
    }

    private func send(_ kind: String, _ name: String?) {
        guard descriptor >= 0 else { return }
        let saved = errno
        defer { errno = saved }
        var now = timespec()
        guard clock_gettime(CLOCK_MONOTONIC, &now) == 0 else { return }
        let ns = UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
        // A newline would split the event: names stop at the first one, as in the C header.
        let cleanName = name.map { String($0.prefix { $0 != "\n" }) }
        var line = kind + " " + String(ns)
        if let cleanName { line += " " + cleanName }
        line += "\n"
        _ = line.withUTF8 { bytes in
            Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
    }
}
