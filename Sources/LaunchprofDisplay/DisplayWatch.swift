import CLaunchprof
import LaunchprofReport
import LaunchprofSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What every display observer shares: one thread per session that watches the display server,
/// a wake pipe that tells that thread a launch began or that it must stop, and the launch it
/// watches (`CurrentLaunch`). An observer brings the connection and the loop (`watch`), which
/// polls the wake pipe's read end beside its connection and ends when `stopRequested` says so.
/// The monitor's display watchers (LaunchprofMonitor's `FieldDisplays`) use it too, without a
/// launch of their own.
package final class DisplayWatch: @unchecked Sendable {
    let launch = CurrentLaunch()
    private let wakePipe: (read: Int32, write: Int32)
    private var thread: DedicatedThread<Void>?
    /// Closes the observer's connection, after its thread has ended.
    private let disconnect: () -> Void
    private let ended = Ended()

    private final class Ended: Sendable {
        let flag = Atomic(false)
    }

    /// Whether the watch's loop returned by itself (its server went away) or was stopped.
    package var hasEnded: Bool { ended.flag.load(ordering: .acquiring) }

    /// Starts `watch` on the watch's thread. `disconnect` is called when the watch stops, or now
    /// when the thread's wake pipe cannot be made (the error is thrown then). `stampsLaunches`:
    /// the thread times a session's launches (see `runAheadOfTimeSharedThreads`).
    init(
        stampsLaunches: Bool = true,
        disconnect: @escaping () -> Void,
        watch: @escaping @Sendable (_ wakeRead: Int32, _ launch: CurrentLaunch) -> Void
    ) throws(FrameObserverError) {
        var fds: [Int32] = [0, 0]
        let error = lp_pipe(&fds, true)
        guard error == 0 else {
            disconnect()
            throw .system(operation: "pipe2", errno: error)
        }
        wakePipe = (fds[0], fds[1])
        self.disconnect = disconnect
        let launch = launch
        let ended = ended
        thread = DedicatedThread { [wakeRead = fds[0]] in
            if stampsLaunches { Self.runAheadOfTimeSharedThreads() }
            watch(wakeRead, launch)
            ended.flag.store(true, ordering: .releasing)
        }
    }

    /// A watch that follows no launch of its own (the monitor's: its observer names each
    /// window's launch from the window's owner).
    package convenience init(
        disconnect: @escaping () -> Void, watch: @escaping @Sendable (_ wakeRead: Int32) -> Void
    ) throws(FrameObserverError) {
        try self.init(stampsLaunches: false, disconnect: disconnect) { wakeRead, _ in watch(wakeRead) }
    }

    deinit { stop() }

    /// A launch begins (call before its spawn): the thread forgets the last launch's windows.
    func beginLaunch(launchedPid: @escaping @Sendable () -> Int32, onEvent: @escaping @Sendable (DisplayEvent) -> Void) {
        launch.begin(launchedPid: launchedPid, onEvent: onEvent)
        wake(UInt8(ascii: "b"))
    }

    /// The launch is over: what was seen of its windows.
    func endLaunch() -> [DisplayEvent] { launch.end() }

    /// Ends the thread, then disconnects.
    package func stop() {
        guard let thread else { return }
        wake(Self.stopByte)
        thread.join()
        self.thread = nil
        disconnect()
        close(wakePipe.read)
        close(wakePipe.write)
    }

    /// On the thread, when the wake pipe is readable: empties it; true when the watch must end.
    package static func stopRequested(_ wakeRead: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = read(wakeRead, &bytes, bytes.count)
        return count > 0 && bytes[..<count].contains(stopByte)
    }

    private static let stopByte = UInt8(ascii: "s")

    /// A session's observer stamps each event when its thread takes it off the connection, so
    /// every wait for a CPU makes a first frame late: 2.9 ms after the fixture's own answer in a
    /// full test run, ~3 ms beside two busy loops of the same session. Nice -20 did not help
    /// (waits of 2–26 ms remained: a time-shared wake-up need not preempt a running task before
    /// its next tick); real-time priority 1, where permitted (root, CAP_SYS_NICE), did: the
    /// test of it passed 6 of 7 times beside the loops, 1 of 3 before. The thread
    /// does a little work per event and blocks. The Wayland relay needs it twice over: every
    /// message of the launched program crosses it, so its latency adds to each round trip. Not
    /// for the monitor's long-lived watches, whose events any user of the display can cause: a
    /// flood must not buy anyone a real-time thread.
    private static func runAheadOfTimeSharedThreads() {
        var parameter = sched_param(sched_priority: 1)
        _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameter)
    }

    private func wake(_ byte: UInt8) {
        var value = byte
        _ = write(wakePipe.write, &value, 1)
    }
}
