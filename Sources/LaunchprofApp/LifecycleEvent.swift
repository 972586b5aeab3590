#if canImport(Glibc)
    import Glibc
#endif

/// The app-state transitions launchprof delivers once the app is running, like
/// UIApplicationDelegate's. The transport is a signal (documented in launchprof.h, so any
/// language can take part):
///
///     SIGUSR1  to the background: willResignActive, then didEnterBackground
///     SIGUSR2  to the foreground: willEnterForeground, then didBecomeActive
///     SIGTERM  willTerminate, then the process ends by SIGTERM as it would have
///
/// Each callback but willTerminate is reported on the hook channel as an app phase of its own
/// name, so launchprof sees when the app became active again (`launchprof run --resume-cycles`).
public enum LifecycleEvent: String, Sendable, CaseIterable {
    case willResignActive, didEnterBackground, willEnterForeground, didBecomeActive, willTerminate

    /// The signals that carry the transitions.
    public static let backgroundSignal = SIGUSR1
    public static let foregroundSignal = SIGUSR2
    public static let terminateSignal = SIGTERM

    /// The events one signal stands for, in order.
    public static func events(for signal: Int32) -> [LifecycleEvent] {
        switch signal {
        case backgroundSignal: [.willResignActive, .didEnterBackground]
        case foregroundSignal: [.willEnterForeground, .didBecomeActive]
        case terminateSignal: [.willTerminate]
        default: []
        }
    }
}

/// Turns the lifecycle signals into calls on one thread of its own: the handler only writes the
/// signal's number to a pipe (async-signal-safe), the thread reads it and calls `deliver`.
enum LifecycleSignals {
    nonisolated(unsafe) private static var pipeWrite: Int32 = -1

    final class Receiver {
        let read: Int32
        let deliver: (Int32) -> Void
        init(read: Int32, deliver: @escaping (Int32) -> Void) {
            self.read = read
            self.deliver = deliver
        }
    }

    /// Installs the handlers and starts the receiving thread. Returns false (nothing installed)
    /// when a pipe or thread cannot be made.
    @discardableResult
    static func install(_ deliver: @escaping (Int32) -> Void) -> Bool {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        pipeWrite = fds[1]
        let receiver = Unmanaged.passRetained(Receiver(read: fds[0], deliver: deliver)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let receiver = Unmanaged<Receiver>.fromOpaque(context).takeRetainedValue()
            var byte: UInt8 = 0
            while true {
                let count = read(receiver.read, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return nil }
                receiver.deliver(Int32(byte))
            }
        }, receiver)
        guard started == 0 else {
            Unmanaged<Receiver>.fromOpaque(receiver).release()
            close(fds[0])
            close(fds[1])
            return false
        }
        pthread_detach(thread)
        for signal in [LifecycleEvent.backgroundSignal, LifecycleEvent.foregroundSignal, LifecycleEvent.terminateSignal] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: signal)
                _ = write(LifecycleSignals.pipeWrite, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
        return true
    }
}
