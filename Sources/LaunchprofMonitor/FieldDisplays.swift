import LaunchprofSystem
import CFrameX11
import CLaunchprof
import LaunchprofDisplay
import LaunchprofReport
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The X11 displays the monitor watches for watched programs' windows: the ones `--display`
/// names, and each one a watched launch's environment names (`DISPLAY`, read from
/// /proc/PID/environ: another user's bytes, parsed strictly: a local display `:N` or `:N.S`
/// only). One connection and thread per display (`CFrameX11` in field mode): a new window is
/// watched when its owner, or an ancestor of it, runs a watched program — told by the process's
/// executable, not by its name — and its map and first content are reported for that process.
///
/// A display's server must be the machine's or the launched program's user's own (the kernel
/// names the peer of the connection): the monitor, as root, talks to no other user's X server.
public final class FieldDisplays: @unchecked Sendable {
    /// At most this many displays at once.
    public static let maximumDisplays = 16

    private let owners: WatchedOwners
    private let onEvent: @Sendable (FieldEvent) -> Void
    private let watchers = Mutex<[String: DisplayWatcher]>([:])
    /// Displays that could not be watched, each said once.
    private let refused = Mutex<Set<String>>([])
    private let say: @Sendable (String) -> Void

    public init(programs: [WatchedProgram], say: @escaping @Sendable (String) -> Void, onEvent: @escaping @Sendable (FieldEvent) -> Void) {
        owners = WatchedOwners(programs.map { ProgramIdentity(device: $0.device, inode: $0.inode) })
        self.onEvent = onEvent
        self.say = say
    }

    /// Watches `display` (`--display`), unless it is watched already; `uid`: the user whose
    /// program uses it (nil: `--display`, any server of root's). Returns why windows made on it
    /// until now went unseen (it was not watched before this call, or cannot be); nil when it
    /// was watched already.
    @discardableResult
    public func watch(_ display: String, uid: uid_t? = nil) -> String? {
        guard let name = Self.localDisplay(display) else {
            sayOnce(display, "not watching display \(display.debugDescription): only a local display (:N or :N.S) is watched")
            return "its display \(display.debugDescription) is not watched (only a local display :N is)"
        }
        // A server that went away (restarted, or another on the same number) is watched afresh.
        let (opened, full, gone) = watchers.withLock { watchers -> (Bool, Bool, DisplayWatcher?) in
            if let watcher = watchers[name] {
                if watcher.isAlive { return (true, false, nil) }
                watchers[name] = nil
                return (false, false, watcher)
            }
            return (false, watchers.count >= Self.maximumDisplays, nil)
        }
        gone?.stop()
        if opened { return nil }
        if full {
            sayOnce(name, "not watching display \(name): \(Self.maximumDisplays) displays are watched already")
            return "its display \(name) is not watched (\(Self.maximumDisplays) displays are already)"
        }
        do throws(FrameWatchFailure) {
            let watcher = try DisplayWatcher(display: name, allowedUID: uid, owners: owners, onEvent: onEvent)
            watchers.withLock { $0[name] = watcher }
            return "its display \(name) was first watched during this launch: a window it showed before was not seen"
        } catch {
            sayOnce(name, "not watching display \(name): \(error.reason)")
            return "its display \(name) is not watched: \(error.reason)"
        }
    }

    /// Watches the display `pid`'s environment names, if any; why its windows may go unseen, as
    /// `watch` says.
    @discardableResult
    public func watchDisplay(ofProcess pid: Int32) -> String? {
        guard let environ = SmallFile.bytes("/proc/\(pid)/environ", limit: 1 << 20) else { return nil }
        var status = stat()
        guard stat("/proc/\(pid)", &status) == 0 else { return nil }
        var unseen: String?
        for entry in environ.split(separator: 0) where entry.starts(with: Array("DISPLAY=".utf8)) {
            let value = String(decoding: entry.dropFirst(8).prefix(64), as: UTF8.self)
            unseen = watch(value, uid: status.st_uid) ?? unseen
        }
        return unseen
    }

    public var watched: [String] { watchers.withLock { Array($0.keys).sorted() } }

    /// When the earliest display thread now handling its server's events began (nil: none is):
    /// every event it has yet to deliver is stamped at or after this, so the loop orders nothing
    /// past it (a thread that a loaded machine keeps from running delays the launches it may
    /// concern instead of losing their frames).
    public var busySinceNs: UInt64? {
        watchers.withLock { $0.values.compactMap(\.busySinceNs).min() }
    }

    public func stop() {
        let all = watchers.withLock { watchers in
            defer { watchers = [:] }
            return Array(watchers.values)
        }
        for watcher in all { watcher.stop() }
    }

    private func sayOnce(_ key: String, _ text: String) {
        let first = refused.withLock { $0.insert(key).inserted }
        if first { say(text) }
    }

    /// `:N` or `:N.S` (N and S decimal, at most 5 digits), as `:N.S`; nil for anything else: a
    /// host name, a path, a protocol prefix.
    public static func localDisplay(_ value: String) -> String? {
        guard value.hasPrefix(":") else { return nil }
        let parts = value.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count),
            parts.allSatisfy({ !$0.isEmpty && $0.count <= 5 && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } })
        else { return nil }
        return ":" + parts.joined(separator: ".")
    }
}

struct FrameWatchFailure: Error {
    var reason: String
}

/// A file's identity: what a process's executable is compared by.
struct ProgramIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

/// Which watched launch a window's owner belongs to: the owner or its nearest ancestor whose
/// executable is a watched program (by device and inode, from /proc/PID/exe).
final class WatchedOwners: Sendable {
    let identities: Set<ProgramIdentity>

    init(_ identities: [ProgramIdentity]) {
        self.identities = Set(identities)
    }

    /// The pid of the process running a watched program that `pid` is or descends from; 0: none.
    func launch(of pid: Int32) -> Int32 {
        var current = pid
        for _ in 0..<32 where current > 1 {
            var status = stat()
            if stat("/proc/\(current)/exe", &status) == 0,
                identities.contains(ProgramIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)))
            {
                return current
            }
            guard let parent = Self.parent(of: current) else { return 0 }
            current = parent
        }
        return 0
    }

    /// The parent pid from /proc/PID/stat (the command name may hold spaces and parentheses:
    /// the fields follow the last ')').
    static func parent(of pid: Int32) -> Int32? {
        guard let bytes = SmallFile.bytes("/proc/\(pid)/stat", limit: 4096), let close = bytes.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 2 else { return nil }
        return Int32(String(decoding: fields[1], as: UTF8.self))
    }
}

/// One display's connection, watched on a thread of its own (`DisplayWatch`, the frame observers'
/// base). At connect, the display's top-level windows are scanned: one a watched launch made
/// before the connection but has not shown yet is watched from there (its map and first frame
/// are seen); one already shown is not reported (its first frame went unseen).
final class DisplayWatcher: @unchecked Sendable {
    let display: String
    private let watch: DisplayWatch
    /// Windows of watched launches made before the connection, not shown yet at its scan.
    let adopted: Int

    /// False once its thread ended (the server went away).
    var isAlive: Bool { !watch.hasEnded }

    private final class Busy: Sendable {
        /// 0: waiting for the server; else when the thread began handling its events.
        let sinceNs = Atomic<UInt64>(0)
    }

    private let busy = Busy()
    var busySinceNs: UInt64? {
        let since = busy.sinceNs.load(ordering: .acquiring)
        return since == 0 ? nil : since
    }

    init(display: String, allowedUID: uid_t?, owners: WatchedOwners, onEvent: @escaping @Sendable (FieldEvent) -> Void) throws(FrameWatchFailure) {
        self.display = display
        var handle: OpaquePointer?
        var hasXRes: Int32 = 0
        let status = lp_x11_open(display, &handle, &hasXRes)
        guard status == Int32(LP_X11_OK.rawValue), let handle else {
            throw FrameWatchFailure(
                reason: status == Int32(LP_X11_NO_DAMAGE.rawValue) ? "its server has no DAMAGE extension" : "cannot connect to it")
        }
        // The kernel names the server: root's, or the user's whose program uses it.
        let fd = lp_x11_fd(handle)
        var credentials = [UInt32](repeating: 0, count: 3)  // struct ucred: pid, uid, gid
        var length = socklen_t(12)
        let known = credentials.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, $0.baseAddress, &length) } == 0
        let uid = credentials[1]
        guard known, uid == 0 || uid == geteuid() || allowedUID.map({ $0 == uid }) == true else {
            lp_x11_close(handle)
            throw FrameWatchFailure(reason: known ? "its server runs as uid \(uid), neither root nor the program's user" : "its server cannot be identified")
        }
        let context = Unmanaged.passRetained(owners)
        lp_x11_set_owner_filter(handle, { context, pid in
            guard let context else { return 0 }
            return Unmanaged<WatchedOwners>.fromOpaque(context).takeUnretainedValue().launch(of: pid)
        }, context.toOpaque())
        adopted = Int(lp_x11_adopt_existing(handle))
        // Used by the watch's thread alone until the watch has stopped it.
        nonisolated(unsafe) let connection = handle
        do throws(FrameObserverError) {
            let busy = busy
            watch = try DisplayWatch(disconnect: {
                lp_x11_close(connection)
                context.release()
            }) { wakeRead in
                Self.observe(connection, wakeRead: wakeRead, display: display, busy: busy, onEvent: onEvent)
            }
        } catch {
            throw FrameWatchFailure(reason: "\(error)")
        }
    }

    func stop() { watch.stop() }

    private static func observe(
        _ observer: OpaquePointer, wakeRead: Int32, display: String, busy: Busy, onEvent: @Sendable (FieldEvent) -> Void
    ) {
        var descriptors = [
            pollfd(fd: lp_x11_fd(observer), events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [lp_x11_event](repeating: lp_x11_event(), count: 32)
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            if poll(&descriptors, 2, -1) < 0 && errno != EINTR { return }
            if descriptors[1].revents != 0, DisplayWatch.stopRequested(wakeRead) { return }
            // Events are stamped as they are taken off the connection, after this.
            busy.sinceNs.store(lp_now_ns(), ordering: .releasing)
            let count = lp_x11_dispatch(observer, &buffer, Int32(buffer.count))
            if count < 0 { return }  // the server went away
            for raw in buffer.prefix(Int(count)) where raw.root_pid > 0 {
                let event = DisplayEvent(
                    kind: raw.kind == Int32(LP_X11_FIRST_FRAME.rawValue) ? .firstFrame : .windowMapped,
                    atNs: raw.at_ns, pid: raw.pid, window: "0x" + String(raw.window, radix: 16), display: display)
                onEvent(.display(pid: raw.root_pid, event))
            }
            busy.sinceNs.store(0, ordering: .releasing)
        }
    }
}
