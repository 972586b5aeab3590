import CLaunchprof
import Synchronization
import Testing
@testable import LaunchprofCore

#if canImport(Glibc)
import Glibc
#endif

/// The run monitor's thread runs a launch's watch only when one of the launch's descriptors or
/// its deadline wakes it; otherwise the caller makes the last pass itself.
@Suite("monitor thread: woken by the launch's descriptors and deadline only", .serialized)
struct MonitorThreadTests {
    /// A pipe, closed at the end of the test.
    private final class Pipe: Sendable {
        let read: Int32
        let write: Int32

        init() throws {
            var fds: [Int32] = [-1, -1]
            try #require(lp_pipe(&fds, true) == 0)
            (read, write) = (fds[0], fds[1])
        }

        deinit {
            close(read)
            close(write)
        }

        func send(_ byte: UInt8) {
            var byte = byte
            _ = Glibc.write(write, &byte, 1)
        }

        /// Blocks until a byte arrives (the descriptor is non-blocking: poll first).
        func receive() -> UInt8? {
            var descriptor = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 10_000) == 1 else { return nil }
            var byte: UInt8 = 0
            return Glibc.read(read, &byte, 1) == 1 ? byte : nil
        }
    }

    @Test("a launch nothing arrives for never starts the job on the thread")
    func quietLaunchIsFinishedByTheCaller() throws {
        let thread = try MonitorThread()
        defer { thread.stop() }
        let watched = try Pipe()
        let ran = Mutex(0)
        for _ in 0..<3 {
            thread.arm([watched.read], deadlineNs: lp_now_ns() + 60_000_000_000) { ran.withLock { $0 += 1 } }
            var told = false
            #expect(thread.finishJob { told = true })
            #expect(!told)
        }
        #expect(ran.withLock { $0 } == 0)
    }

    @Test("input on a watched descriptor starts the job on the thread; finishing tells it to end and waits")
    func inputStartsTheJob() throws {
        let thread = try MonitorThread()
        defer { thread.stop() }
        let watched = try Pipe()
        let started = try Pipe()
        let end = try Pipe()
        let caller = pthread_self()
        let onOtherThread = Mutex(false)
        thread.arm([watched.read], deadlineNs: nil) {
            onOtherThread.withLock { $0 = pthread_equal(pthread_self(), caller) == 0 }
            started.send(1)
            _ = end.receive()
        }
        watched.send(0x61)
        #expect(started.receive() == 1)
        let ranInline = thread.finishJob { end.send(2) }
        #expect(!ranInline)
        #expect(onOtherThread.withLock { $0 })
    }

    @Test("the deadline starts the job when nothing arrives")
    func deadlineStartsTheJob() throws {
        let thread = try MonitorThread()
        defer { thread.stop() }
        let watched = try Pipe()
        let started = try Pipe()
        let armedAt = lp_now_ns()
        let startedAt = Mutex<UInt64>(0)
        thread.arm([watched.read], deadlineNs: armedAt + 30_000_000) {
            startedAt.withLock { $0 = lp_now_ns() }
            started.send(1)
        }
        #expect(started.receive() == 1)
        #expect(!thread.finishJob {})
        // Not before its deadline (a loaded machine may start it later, never earlier).
        #expect(startedAt.withLock { $0 } >= armedAt + 30_000_000)
    }
}
