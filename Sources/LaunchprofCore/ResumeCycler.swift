import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

/// `launchprof run --resume-cycles K`: once the app is active (its first frame), sends it to the
/// background and back K times, by the lifecycle signals the hooks listen to (SIGUSR1, SIGUSR2),
/// and times each resume: the foreground signal → the end of the app's `didBecomeActive`
/// (MetricKit's application resume time). Pure state: the monitor feeds it hook events and
/// sends the signals it asks for.
struct ResumeCycler: Sendable {
    enum Step: Sendable, Equatable {
        case sendBackground
        case awaitingBackground
        case suspend
        case sendForeground
        case awaitingActive(sentAtNs: UInt64)
    }

    let cycles: Int
    private(set) var completed = 0
    private(set) var step = Step.sendBackground
    private(set) var resumeTimesNs: [UInt64] = []
    /// States entered, with CLOCK_MONOTONIC times.
    private(set) var states: [(state: LifecycleState.State, atNs: UInt64)] = []

    static let backgroundSignal = SIGUSR1
    static let foregroundSignal = SIGUSR2

    init(cycles: Int) { self.cycles = cycles }

    var isDone: Bool { completed >= cycles }

    /// What the monitor does next.
    enum Action: Sendable, Equatable {
        case signal(Int32)
        /// Suspend the app (the cgroup freezer); `suspended(at:)` reports it done.
        case suspend
        /// Thaw it (when suspended) and send the foreground signal: the resume being timed.
        case resume(signal: Int32)
    }

    /// The action to take now, if any (and the step moves on).
    mutating func next(now: UInt64) -> Action? {
        guard !isDone else { return nil }
        switch step {
        case .sendBackground:
            step = .awaitingBackground
            return .signal(Self.backgroundSignal)
        case .suspend:
            step = .sendForeground
            return .suspend
        case .sendForeground:
            step = .awaitingActive(sentAtNs: now)
            states.append((.inactive, now))
            return .resume(signal: Self.foregroundSignal)
        case .awaitingBackground, .awaitingActive:
            return nil
        }
    }

    /// The app was suspended at `time` (the freezer reported it frozen).
    mutating func suspended(at time: UInt64) {
        states.append((.suspended, time))
    }

    /// An app phase ended (`end <t> <name>` on the hook channel).
    mutating func phaseEnded(_ name: String, atNs time: UInt64) {
        switch (step, name) {
        case (.awaitingBackground, "didEnterBackground"):
            states.append((.background, time))
            step = .suspend
        case (.awaitingActive(let sentAt), "didBecomeActive"):
            resumeTimesNs.append(time &- min(time, sentAt))
            states.append((.active, time))
            completed += 1
            step = .sendBackground
        default:
            break
        }
    }

    /// The state the cycler is waiting for the app to report, for a timeout's message; nil when
    /// it is not waiting on the app.
    var awaitedState: String? {
        let cycle = "(resume cycle \(completed + 1) of \(cycles))"
        switch step {
        case .awaitingBackground:
            return "the app to report didEnterBackground after SIGUSR1 \(cycle)"
        case .awaitingActive:
            return "the app to report didBecomeActive after SIGUSR2 \(cycle)"
        case .sendBackground, .suspend, .sendForeground:
            return nil
        }
    }

    /// Whether nothing has been sent to the app yet.
    var hasNotStarted: Bool { completed == 0 && step == .sendBackground }

    /// The median resume time (the run's `resumeTimeNs`).
    var medianResumeNs: UInt64? {
        guard !resumeTimesNs.isEmpty else { return nil }
        return resumeTimesNs.sorted()[(resumeTimesNs.count - 1) / 2]
    }
}
