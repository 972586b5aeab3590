import LaunchprofAnalysis
import LaunchprofReport

/// The wall clock and boot-time clock against CLOCK_MONOTONIC, read once: the kernel's events are
/// stamped on the monotonic clock, a field launch's row and report on the wall clock.
public struct FieldClocks: Sendable, Equatable {
    /// realtime − monotonic and boottime − monotonic, ns.
    public var realtimeOffsetNs: Int64
    public var boottimeOffsetNs: Int64

    public init(realtimeOffsetNs: Int64, boottimeOffsetNs: Int64) {
        self.realtimeOffsetNs = realtimeOffsetNs
        self.boottimeOffsetNs = boottimeOffsetNs
    }
}

extension FieldLaunchAssembler.Launch {
    /// What the launch ended waiting for when it timed out.
    static let awaited = "a first frame (the first-frame hook or a window's first content) or the exit"

    /// The spawn on the wall clock, ns since the Unix epoch.
    public func startedAtUnixNs(_ clocks: FieldClocks) -> Int64 {
        Int64(bitPattern: spawnNs) &+ clocks.realtimeOffsetNs
    }

    /// The launch as a run of the same report `launchprof run` writes: its events through the
    /// same `PhaseTimeline` (automatic readiness), plus what only the field knows (how it
    /// started, the wall clock, the resume).
    /// - Parameters:
    ///   - unobservable: the program's phases the monitor does not probe, and why.
    ///   - timeoutNs: the timeout a timed-out launch ran into.
    public func run(
        index: Int, unobservable: [(phase: String, reason: String)], timeoutNs: UInt64, clocks: FieldClocks
    ) throws(LaunchReportError) -> LaunchRun {
        // The program's own limits apply to its image: the last one of an exec chain.
        let events = self.events.filter { if case .exited = $0 { false } else { true } }
            + unobservable.map { LaunchEvent.unobservable(phase: $0.phase, reason: $0.reason) }
            + self.events.filter { if case .exited = $0 { true } else { false } }
        // A display not watched from its exec may have hidden its windows: its exit is then no
        // stand-in for a frame (that would be a guess), only a hook's or a window's frame counts.
        let timeline = try PhaseTimeline(events: events, readiness: unwatchedDisplay == nil ? .automatic : .frame)
        let outcome: RunOutcome? =
            timedOut ? .timedOut(after: timeoutNs, waitingFor: Self.awaited) : nil
        var run = LaunchRun(index: index, pid: pid, timeline: timeline, timedOut: timedOut, outcome: outcome)
        if timedOut {
            // A timeout is never a first frame (nor an exit it did not see).
            run.metrics.timeToFirstFrameNs = nil
            run.metrics.extendedLaunchNs = nil
        }
        if let unwatchedDisplay, let absent = run.absent.firstIndex(where: { $0.phase == LaunchPhase.firstFrame && $0.image == nil }) {
            run.absent[absent].reason = unwatchedDisplay
        }
        if let reason = self.events.lazy.compactMap({ event -> String? in
            if case .unobservable(LaunchPhase.exec, let reason) = event { reason } else { nil }
        }).first, let exec = run.phases.firstIndex(where: { $0.name == LaunchPhase.exec && $0.image == nil }) {
            // The spawn was not seen: the exec's zero-length stand-in is no phase.
            run.phases.remove(at: exec)
            if !run.absent.contains(where: { $0.phase == LaunchPhase.exec && $0.image == nil }) {
                run.absent.append(AbsentPhase(phase: LaunchPhase.exec, reason: reason, image: nil))
            }
        }
        run.spawnedAt = SpawnInstant(
            monotonicNs: spawnNs, boottimeNs: UInt64(max(0, Int64(bitPattern: spawnNs) &+ clocks.boottimeOffsetNs)))
        run.field = FieldLaunchFacts(
            startType: startType, startedAt: FieldLaunchFacts.isoTime(unixNs: startedAtUnixNs(clocks)),
            resumedAtNs: resumedAtNs.map { $0 >= spawnNs ? $0 - spawnNs : 0 })
        switch startType {
        case .resumed:
            // MetricKit's optimized time to first draw: from the user's launch (the resume), the
            // prewarm and the freeze left out.
            if let resumed = resumedAtNs, let frame = run.metrics.timeToFirstFrameNs, spawnNs + frame >= resumed {
                run.metrics.optimizedTimeToFirstFrameNs = spawnNs + frame - resumed
            }
        case .forked:
            run.metrics.optimizedTimeToFirstFrameNs = run.metrics.timeToFirstFrameNs
        case .broughtToFront:
            run.metrics.resumeTimeNs = run.metrics.timeToFirstFrameNs
        case .cold:
            break
        }
        return run
    }
}
