import CLaunchprof
import LaunchprofReport
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Watches one launch from outside ptrace, on the session's `MonitorThread`: the hook channel,
/// the child's output (for `--ready stdout:`/`stderr:`), the timeout. It decides when the launch
/// is complete and then ends the child through `TraceControl` (SIGTERM, then SIGKILL after a
/// grace period). The thread runs the watch only once something arrives or the timeout passes;
/// a launch nothing arrived for is drained once, on the tracer's thread, when it has ended.
final class RunMonitor: @unchecked Sendable {
    /// What the monitor saw, handed over when it stops.
    struct Outcome: Sendable {
        var events: [LaunchEvent] = []
        var warnings: [TimelineWarning] = []
        var timedOut = false
        /// With `timedOut`: what the launch was still waiting for.
        var waitedFor: String?
        /// `--resume-cycles` on a program that catches neither lifecycle signal: why no cycle ran.
        var noLifecycleHandling: String?
        /// `--resume-cycles`: each resume's time and the states entered (CLOCK_MONOTONIC).
        var resumeTimesNs: [UInt64] = []
        var lifecycle: [(state: LifecycleState.State, atNs: UInt64)] = []
    }

    struct Streams {
        /// launchprof's end of the hook channel.
        var hookSocket: Int32
        /// Read ends of the child's stdout/stderr pipes, when readiness watches them.
        var standardOutput: Int32?
        var standardError: Int32?
        /// Where watched output is passed on to (-1: dropped).
        var outputDestination: Int32
        var errorDestination: Int32
    }

    private let streams: Streams
    private let readiness: LaunchReadiness
    private let pattern: Regex<AnyRegexOutput>?
    private let timeoutNs: UInt64?
    private let lingerNs: UInt64
    private let graceNs: UInt64
    private let control: TraceControl
    /// Written by the tracer's thread when the child has ended; the session's (`MonitorThread`).
    private let wake: (read: Int32, write: Int32)
    // Owned by the monitor's job until `finish()` has waited for it.
    private var outcome = Outcome()
    private var worker: MonitorThread?
    /// When `start` armed the watch: the timeout counts from here.
    private var startedAt: UInt64 = 0
    /// `--resume-cycles`: drives background/foreground cycles once the app is active.
    private var cycler: ResumeCycler?
    /// `--resume-cycles`: the app's own cgroup, frozen while it is suspended (nil: no freezer).
    private var freezer: CgroupFreezer?
    /// The display a frame observer watches (named by a `--ready frame` timeout), and what it
    /// reported that the monitor's thread has not taken yet.
    var watchedDisplay: String?
    private let displayEvents = Mutex<[DisplayEvent]>([])

    /// - Parameter wake: the session's wake pipe (`MonitorThread.wake`), one launch at a time.
    init(
        streams: Streams, readiness: LaunchReadiness, pattern: Regex<AnyRegexOutput>?,
        timeoutNs: UInt64?, lingerNs: UInt64, graceNs: UInt64, control: TraceControl,
        wake: (read: Int32, write: Int32), resumeCycles: Int = 0
    ) {
        if resumeCycles > 0 { cycler = ResumeCycler(cycles: resumeCycles) }
        self.wake = wake
        self.streams = streams
        self.readiness = readiness
        self.pattern = pattern
        self.timeoutNs = timeoutNs
        self.lingerNs = lingerNs
        self.graceNs = graceNs
        self.control = control
        // The tracer sees a listening socket itself (seccomp); it wakes the monitor through the
        // same pipe the child's end uses, with another byte.
        let wakeWrite = wake.write
        control.onReady { _ in
            var byte = UInt8(ascii: "r")
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// A display server saw a window of the child (called on the frame observer's thread).
    func displayEventSeen(_ event: DisplayEvent) {
        displayEvents.withLock { $0.append(event) }
        var byte = UInt8(ascii: "f")
        _ = write(wake.write, &byte, 1)
    }

    /// Starts watching on `worker`, the session's monitor thread.
    func start(on worker: MonitorThread) {
        self.worker = worker
        // Whatever an earlier launch left in the shared pipe (a late display event) or hook
        // channel is not ours.
        var stale = [UInt8](repeating: 0, count: 4096)
        while read(wake.read, &stale, stale.count) > 0 {}
        while recv(streams.hookSocket, &stale, stale.count, Int32(MSG_DONTWAIT)) > 0 {}
        startedAt = lp_now_ns()
        var descriptors = [wake.read, streams.hookSocket]
        if let fd = streams.standardOutput { descriptors.append(fd) }
        if let fd = streams.standardError { descriptors.append(fd) }
        worker.arm(descriptors, deadlineNs: timeoutNs.map { startedAt &+ $0 }) { [self] in watch() }
    }

    /// Called once the child has ended: drain what is left and return the outcome.
    func finish() -> Outcome {
        let wakeWrite = wake.write
        let endWatch = {
            var byte = UInt8(ascii: "e")
            _ = write(wakeWrite, &byte, 1)
        }
        // Nothing woke the thread: one pass here reads what is left (the "e" ends it). Written
        // only once the thread no longer watches the pipe, so it wakes nobody.
        if worker?.finishJob(endRunningJob: endWatch) == true {
            endWatch()
            watch()
        }
        worker = nil
        freezer?.remove()
        freezer = nil
        return outcome
    }

    // MARK: The monitor's thread

    private struct LaunchState {
        var firstFrame = false
        /// The display server saw the child's first frame.
        var displayFrame = false
        var openTasks: Set<String> = []
        var ready = false
        var listening = false
        /// When the launch was complete: the child is ended `lingerNs` later.
        var completedAt: UInt64?
        var terminationSentAt: UInt64?
        var stdoutLine: [UInt8] = []
        var stderrLine: [UInt8] = []
        /// Hook bytes after the last complete line (the stream may split a line).
        var hookTail: [UInt8] = []
    }

    private func watch() {
        var state = LaunchState()
        var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: streams.hookSocket, events: Int16(POLLIN), revents: 0)]
        if let fd = streams.standardOutput { descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        if let fd = streams.standardError { descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }

        while true {
            let now = lp_now_ns()
            var wakeAt = UInt64.max
            if let timeoutNs, !state.ready { wakeAt = startedAt + timeoutNs }
            if let completed = state.completedAt, state.terminationSentAt == nil {
                wakeAt = min(wakeAt, completed + lingerNs)
            }
            if let sent = state.terminationSentAt { wakeAt = min(wakeAt, sent + graceNs) }
            let waitMs: Int32 = wakeAt == .max ? -1 : Int32(clamping: (wakeAt &- min(wakeAt, now) + 999_999) / 1_000_000)
            for index in descriptors.indices { descriptors[index].revents = 0 }
            let ready = poll(&descriptors, nfds_t(descriptors.count), waitMs)
            if ready < 0 && errno != EINTR { break }

            var childEnded = false
            if descriptors[0].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 16)
                let count = read(wake.read, &bytes, bytes.count)
                if count > 0 {
                    childEnded = bytes[..<count].contains(UInt8(ascii: "e"))
                    if bytes[..<count].contains(UInt8(ascii: "r")) { state.listening = true }
                }
            }
            drainHookChannel(&state)
            drainOutput(&state)
            for event in displayEvents.withLock({ events in defer { events = [] }; return events }) {
                outcome.events.append(.display(event))
                if event.kind == .firstFrame { state.displayFrame = true }
            }
            if let cycler {
                outcome.resumeTimesNs = cycler.resumeTimesNs
                outcome.lifecycle = cycler.states
            }
            if childEnded {
                // The child is gone: a last line without its newline is still a line.
                parseHookLines(state.hookTail, &state)
                break
            }
            let after = lp_now_ns()
            if !state.ready, isComplete(state) {
                if let cycling = cycler, cycling.hasNotStarted, let missing = missingLifecycleHandlers() {
                    // Its default action would kill the program: say so instead of sending it.
                    outcome.noLifecycleHandling =
                        "the program has no lifecycle handling: it does not catch \(missing), so the "
                        + "background and foreground signals would end it; install the launch hooks' "
                        + "lifecycle callback (launchprof_set_lifecycle_callback, LaunchprofApplication)"
                    cycler = nil
                    state.ready = true
                    state.completedAt = after
                } else if var cycling = cycler, !cycling.isDone {
                    // Suspending is followed at once by the resume: nothing else would wake
                    // this loop in between.
                    while let action = cycling.next(now: lp_now_ns()) {
                        switch action {
                        case .signal(let signal): control.send(signal: signal)
                        case .suspend:
                            if freezer == nil { freezer = CgroupFreezer(pid: control.pid) }
                            if freezer?.freeze() == true { cycling.suspended(at: lp_now_ns()) }
                        case .resume(let signal):
                            freezer?.thaw()
                            control.send(signal: signal)
                        }
                    }
                    cycler = cycling
                } else {
                    state.ready = true
                    state.completedAt = after
                }
            }
            if let completed = state.completedAt, after >= completed + lingerNs {
                terminate(&state, at: after, reason: "launch complete")
            }
            if !state.ready, let timeoutNs, after >= startedAt + timeoutNs {
                state.ready = true
                outcome.timedOut = true
                outcome.waitedFor = awaited(state)
                terminate(&state, at: after, reason: "timeout after \(timeoutNs / 1_000_000) ms waiting for \(outcome.waitedFor ?? "readiness")")
            }
            if let sent = state.terminationSentAt, after >= sent + graceNs {
                control.terminate(signal: SIGKILL, reason: "did not exit \(graceNs / 1_000_000) ms after SIGTERM")
                state.terminationSentAt = .max / 2  // SIGKILL cannot be ignored; stop escalating
            }
        }
    }

    private func terminate(_ state: inout LaunchState, at time: UInt64, reason: String) {
        guard state.terminationSentAt == nil else { return }
        state.terminationSentAt = time
        control.terminate(signal: SIGTERM, reason: reason)
    }

    /// The lifecycle signals the child has no handler for ("SIGUSR1 and SIGUSR2"); nil when it
    /// catches both, or when /proc cannot say (then the cycles are tried).
    private func missingLifecycleHandlers() -> String? {
        let pid = control.pid
        let missing = [ResumeCycler.backgroundSignal, ResumeCycler.foregroundSignal].filter {
            ProcessProbe.catches(pid, signal: $0) == false
        }
        guard !missing.isEmpty else { return nil }
        return missing.map { RunOutcome.signalName($0) }.joined(separator: " and ")
    }

    /// What an incomplete launch is still waiting for, as its timeout names it.
    private func awaited(_ state: LaunchState) -> String {
        if let awaitedState = cycler?.awaitedState, isComplete(state) { return awaitedState }
        if state.firstFrame, !state.openTasks.isEmpty, readiness != .exit {
            let tasks = state.openTasks.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return "the extended-launch task\(state.openTasks.count == 1 ? "" : "s") \(tasks) to finish"
        }
        if readiness == .frame, let watchedDisplay { return "a first frame on \(watchedDisplay)" }
        if !state.firstFrame, readiness == .hook || readiness == .automatic, !childHoldsHookChannel() {
            // Its hook writes fail (EBADF) and the app cannot tell launchprof: say it here.
            return readiness.awaitedEvent + " (the program closed its hook channel, fd \(LP_CHILD_HOOK_FD) "
                + "= LAUNCHPROF_HOOK_FD, so no hook it writes can arrive)"
        }
        return readiness.awaitedEvent
    }

    /// Whether the child still has its hook channel open where it was given (a socket at fd
    /// LAUNCHPROF_HOOK_FD); true when /proc cannot say.
    private func childHoldsHookChannel() -> Bool {
        var info = stat()
        guard stat("/proc/\(control.pid)/fd/\(LP_CHILD_HOOK_FD)", &info) == 0 else {
            return errno != ENOENT
        }
        return info.st_mode & S_IFMT == S_IFSOCK
    }

    /// Whether the launch is complete without waiting for the child's exit.
    private func isComplete(_ state: LaunchState) -> Bool {
        switch readiness {
        case .automatic, .hook, .exit:
            // With hooks, the launch ends at the first frame once every extended task is done;
            // automatic readiness also takes the display server's first frame.
            let frame = state.firstFrame || (readiness == .automatic && state.displayFrame)
            return frame && state.openTasks.isEmpty && readiness != .exit
        case .frame:
            return state.displayFrame
        case .stdout, .stderr:
            return isReadyEventRecorded
        case .listen:
            return state.listening
        }
    }

    private func drainHookChannel(_ state: inout LaunchState) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(streams.hookSocket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return }
            state.hookTail += buffer[..<count]
            // Parse up to the last newline; keep a partial line for the next read.
            guard let end = state.hookTail.lastIndex(of: UInt8(ascii: "\n")) else { continue }
            let complete = Array(state.hookTail[...end])
            state.hookTail.removeFirst(end + 1)
            parseHookLines(complete, &state)
        }
    }

    private func parseHookLines(_ bytes: [UInt8], _ state: inout LaunchState) {
        guard !bytes.isEmpty else { return }
        let parsed = HookChannelParser.parse(bytes, receivedAtNs: lp_now_ns())
        for event in parsed.events {
            outcome.events.append(.hook(event))
            switch event.kind {
            case .firstFrame: state.firstFrame = true
            case .extend: state.openTasks.insert(event.name)
            case .finishExtend: state.openTasks.remove(event.name)
            case .end: cycler?.phaseEnded(event.name, atNs: event.atNs)
            case .begin: break
            }
        }
        for line in parsed.rejectedLines {
            outcome.warnings.append(TimelineWarning(.malformedHookLine, "hook channel: \(line)"))
        }
    }

    private func drainOutput(_ state: inout LaunchState) {
        if let fd = streams.standardOutput {
            drain(fd, into: &state.stdoutLine, passTo: streams.outputDestination, stream: "stdout", launchReady: state.ready)
        }
        if let fd = streams.standardError {
            drain(fd, into: &state.stderrLine, passTo: streams.errorDestination, stream: "stderr", launchReady: state.ready)
        }
    }

    private func drain(
        _ fd: Int32, into line: inout [UInt8], passTo destination: Int32, stream: String,
        launchReady: Bool
    ) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { return }
            let receivedAt = lp_now_ns()
            if destination >= 0 { writeAll(destination, buffer[..<count]) }
            guard let pattern, !launchReady, watches(stream) else { continue }
            for byte in buffer[..<count] {
                if byte == UInt8(ascii: "\n") {
                    let text = String(decoding: line, as: UTF8.self)
                    line.removeAll(keepingCapacity: true)
                    if !isReadyEventRecorded, (try? pattern.firstMatch(in: text)) != nil {
                        outcome.events.append(.ready(reason: "\(stream) matched: \(text)", atNs: receivedAt))
                    }
                } else if line.count < 65536 {
                    line.append(byte)
                }
            }
        }
    }

    private var isReadyEventRecorded: Bool {
        outcome.events.contains { if case .ready = $0 { true } else { false } }
    }

    private func watches(_ stream: String) -> Bool {
        switch readiness {
        case .stdout: stream == "stdout"
        case .stderr: stream == "stderr"
        default: false
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) {
        var rest = bytes
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            rest = rest.dropFirst(written)
        }
    }
}
