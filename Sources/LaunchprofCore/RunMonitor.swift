import CLaunchprof
import LaunchprofReport
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Watches one launch from outside ptrace, on the session's `MonitorThread`: the hook channel,
/// the child's output (for `--ready stdout:`/`stderr:`), what the tracer and the display
/// observers report (a listening socket, a window's frames), the timeout. The readiness policy
/// decides when the launch is complete; the monitor then ends the child through `TraceControl`
/// (SIGTERM, then SIGKILL after a grace period). The thread runs the watch only once something
/// arrives or the timeout passes; a launch nothing arrived for is drained once, on the tracer's
/// thread, when it has ended.
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
    private let readiness: ReadinessPolicy
    private let timeoutNs: UInt64?
    private let lingerNs: UInt64
    private let graceNs: UInt64
    private let control: TraceControl
    /// Wakes the watch when another thread reported something (`Reported`); the session's
    /// (`MonitorThread`). Its bytes mean nothing: what happened is in `reported`.
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
    /// The display a frame observer watches (named by a `--ready frame` timeout).
    var watchedDisplay: String?

    /// What other threads reported that the watch has not taken yet.
    private struct Reported {
        /// The tracer's thread: the child has ended (the watch's last pass).
        var childEnded = false
        /// The tracer's thread: the child's first listening socket.
        var listenedAtNs: UInt64?
        /// The frame observers' threads: the child's windows.
        var displayEvents: [DisplayEvent] = []
    }

    private let reported = Mutex(Reported())

    /// - Parameter wake: the session's wake pipe (`MonitorThread.wake`), one launch at a time.
    init(
        streams: Streams, readiness: ReadinessPolicy, timeoutNs: UInt64?, lingerNs: UInt64, graceNs: UInt64,
        control: TraceControl, wake: (read: Int32, write: Int32), resumeCycles: Int = 0
    ) {
        if resumeCycles > 0 { cycler = ResumeCycler(cycles: resumeCycles) }
        self.wake = wake
        self.streams = streams
        self.readiness = readiness
        self.timeoutNs = timeoutNs
        self.lingerNs = lingerNs
        self.graceNs = graceNs
        self.control = control
        // The tracer sees a listening socket itself (seccomp, `ReadinessPolicy.Watchers.listen`).
        control.onReady { [weak self] atNs in self?.report { $0.listenedAtNs = $0.listenedAtNs ?? atNs } }
    }

    /// A display server saw a window of the child (called on the frame observer's thread).
    func displayEventSeen(_ event: DisplayEvent) {
        report { $0.displayEvents.append(event) }
    }

    /// Records what another thread saw and wakes the watch.
    private func report(_ change: (inout Reported) -> Void) {
        reported.withLock { change(&$0) }
        var byte: UInt8 = 0
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
        let endWatch = { [self] in report { $0.childEnded = true } }
        // Nothing woke the thread: one pass here reads what is left (the child's end ends it).
        // Reported only once the thread no longer watches the pipe, so it wakes nobody.
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
        /// What the launch showed of its readiness so far (`ReadinessPolicy`).
        var evidence = ReadinessPolicy.Evidence()
        var openTasks: Set<String> = [] {
            didSet { evidence.openTasks = !openTasks.isEmpty }
        }
        /// Complete, or timed out: the watch only ends the child from here on.
        var ready = false
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

            if descriptors[0].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                while read(wake.read, &bytes, bytes.count) > 0 {}
            }
            let news = reported.withLock { reported in
                defer { reported.displayEvents = [] }
                return reported
            }
            if state.evidence.readyNs == nil, let listenedAt = news.listenedAtNs { state.evidence.readyNs = listenedAt }
            drainHookChannel(&state)
            drainOutput(&state)
            for event in news.displayEvents {
                outcome.events.append(.display(event))
                if event.kind == .firstFrame, state.evidence.displayFrameNs == nil { state.evidence.displayFrameNs = event.atNs }
            }
            if let cycler {
                outcome.resumeTimesNs = cycler.resumeTimesNs
                outcome.lifecycle = cycler.states
            }
            if news.childEnded {
                // The child is gone: a last line without its newline is still a line.
                parseHookLines(state.hookTail, &state)
                break
            }
            let after = lp_now_ns()
            if !state.ready, readiness.isComplete(state.evidence) {
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
        if let awaitedState = cycler?.awaitedState, readiness.isComplete(state.evidence) { return awaitedState }
        return readiness.awaited(
            state.evidence, openTaskNames: Array(state.openTasks), watchedDisplay: watchedDisplay,
            closedHookDescriptor: childHoldsHookChannel() ? nil : Int32(LP_CHILD_HOOK_FD))
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
            case .firstFrame: if state.evidence.hookFirstFrameNs == nil { state.evidence.hookFirstFrameNs = event.atNs }
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
            drain(fd, into: &state.stdoutLine, passTo: streams.outputDestination, stream: .standardOutput, &state.evidence, launchReady: state.ready)
        }
        if let fd = streams.standardError {
            drain(fd, into: &state.stderrLine, passTo: streams.errorDestination, stream: .standardError, &state.evidence, launchReady: state.ready)
        }
    }

    /// Passes the child's output on, matching its lines against the readiness pattern until one
    /// matches (recorded as a `ready` event).
    private func drain(
        _ fd: Int32, into line: inout [UInt8], passTo destination: Int32, stream: ReadinessPolicy.OutputStream,
        _ evidence: inout ReadinessPolicy.Evidence, launchReady: Bool
    ) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { return }
            let receivedAt = lp_now_ns()
            if destination >= 0 { writeAll(destination, buffer[..<count]) }
            guard !launchReady, evidence.readyNs == nil else { continue }
            for byte in buffer[..<count] {
                if byte == UInt8(ascii: "\n") {
                    let text = String(decoding: line, as: UTF8.self)
                    line.removeAll(keepingCapacity: true)
                    if evidence.readyNs == nil, readiness.matches(line: text, on: stream) {
                        evidence.readyNs = receivedAt
                        outcome.events.append(.ready(reason: "\(stream.rawValue) matched: \(text)", atNs: receivedAt))
                    }
                } else if line.count < 65536 {
                    line.append(byte)
                }
            }
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
