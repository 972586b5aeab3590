import LaunchprofReport

/// One thread's states over a window, from the scheduler's events: every nanosecond of the
/// window in exactly one span. Built by `ThreadTimeline.build`; pure.
///
/// The rules, from the kernel's own bookkeeping:
/// - a switch-in starts `running` (on the switch's CPU);
/// - a switch-out starts what `prev_state` and the kernel stack say (`KernelWait`): `runnable`
///   when preempted, else a wait;
/// - a wake-up (`sched_waking`) ends a wait: `runnable` until the next switch-in. A wake-up
///   while running is the race of a thread woken before it slept: it changes nothing — unless a
///   wait's switch-out follows within `raceNs`: the waker found it already off its run queue
///   but still on the CPU (the switch is recorded at its end), so it never waited;
/// - a new task (`sched_wakeup_new`) is `runnable` until it first runs.
struct ThreadTimeline {
    struct Span {
        var startNs: UInt64
        var endNs: UInt64
        var state: ThreadState
        /// The wait's classification (waits only).
        var wait: KernelWait?
        /// The wake-up that ended the wait (waits only; nil when none was seen).
        var wakeup: SchedulerTrace.Wakeup?
        /// The CPU of the switch-in that ended a `runnable` span, or the one it ran on.
        var cpu: Int32?
        /// The switch-out that started a wait or a preemption (its time), for its stack.
        var switchOutNs: UInt64?

        var durationNs: UInt64 { endNs - startNs }
    }

    /// How long before a wait's switch-out a wake-up can be that ended it (see above): the
    /// scheduler's work between taking a task off its run queue and recording the switch.
    static let raceNs: UInt64 = 200_000

    var tid: Int32
    var spans: [Span]
    /// The thread exited inside the window, at this time.
    var exitedAtNs: UInt64?

    /// The events that concern one thread, in time order.
    enum Event {
        case switchIn(SchedulerTrace.Switch)
        case switchOut(SchedulerTrace.Switch, KernelWait)
        case woken(SchedulerTrace.Wakeup)
        case created(SchedulerTrace.Wakeup)

        var timeNs: UInt64 {
            switch self {
            case .switchIn(let s), .switchOut(let s, _): s.timeNs
            case .woken(let w), .created(let w): w.timeNs
            }
        }

        /// At one instant a switch-out comes before a wake-up and that before a switch-in.
        var order: Int {
            switch self {
            case .created: 0
            case .switchOut: 1
            case .woken: 2
            case .switchIn: 3
            }
        }
    }

    /// Builds `tid`'s timeline over [startNs, endNs) from its `events` (any order), starting
    /// in `initial` (the state at `startNs` when no event says otherwise).
    static func build(
        tid: Int32, events: [Event], startNs: UInt64, endNs: UInt64, initial: ThreadState
    ) -> ThreadTimeline {
        var timeline = ThreadTimeline(tid: tid, spans: [])
        guard endNs > startNs else { return timeline }
        let sorted = events.enumerated().sorted {
            ($0.element.timeNs, $0.element.order, $0.offset) < ($1.element.timeNs, $1.element.order, $1.offset)
        }.map(\.element)
        var current = Span(startNs: startNs, endNs: startNs, state: initial)
        var pendingWakeup: SchedulerTrace.Wakeup?
        func move(to next: Span) {
            current.endNs = max(current.startNs, min(next.startNs, endNs))
            if current.endNs > current.startNs { timeline.spans.append(current) }
            current = next
        }
        for event in sorted {
            let time = min(max(event.timeNs, startNs), endNs)
            if timeline.exitedAtNs != nil { break }
            switch event {
            case .created:
                if current.state != .running {
                    move(to: Span(startNs: time, endNs: time, state: .runnable))
                }
            case .switchIn(let record):
                pendingWakeup = nil
                if current.state == .running {
                    current.cpu = record.cpu
                } else {
                    if current.state == .runnable { current.cpu = record.cpu }
                    move(to: Span(startNs: time, endNs: time, state: .running, cpu: record.cpu))
                }
            case .switchOut(let record, let kind):
                if kind.exited {
                    move(to: Span(startNs: time, endNs: time, state: .other))
                    timeline.exitedAtNs = record.timeNs
                    continue
                }
                if kind.state != .runnable, let early = pendingWakeup, record.timeNs &- early.timeNs <= raceNs {
                    move(to: Span(startNs: time, endNs: time, state: .runnable, switchOutNs: record.timeNs))
                    continue
                }
                move(to: Span(
                    startNs: time, endNs: time, state: kind.state, wait: kind.state == .runnable ? nil : kind,
                    switchOutNs: record.timeNs))
            case .woken(let wakeup):
                if current.state == .running { pendingWakeup = wakeup }
                guard current.state != .running, current.state != .runnable else { continue }
                current.wakeup = wakeup
                move(to: Span(startNs: time, endNs: time, state: .runnable))
            }
        }
        // After an exit the rest of the window stays `other`: the thread is gone.
        current.endNs = endNs
        if current.endNs > current.startNs { timeline.spans.append(current) }
        return timeline
    }

    /// The timeline without `range` (a prewarmed launch's hold: the thread was frozen by
    /// launchprof, no state of its own), spans cut at its bounds.
    func leavingOut(_ range: Range<UInt64>) -> ThreadTimeline {
        var result = self
        result.spans = spans.flatMap { span -> [Span] in
            guard span.startNs < range.upperBound, span.endNs > range.lowerBound else { return [span] }
            var before = span, after = span
            before.endNs = range.lowerBound
            after.startNs = range.upperBound
            return [before, after].filter { $0.endNs > $0.startNs }
        }
        return result
    }

    /// The time in each state within [startNs, endNs).
    func breakdown(from startNs: UInt64, to endNs: UInt64) -> ThreadStateBreakdown {
        var result = ThreadStateBreakdown()
        guard endNs > startNs else { return result }
        // Spans are in order: find the first that ends after startNs.
        var low = 0, high = spans.count
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].endNs <= startNs { low = middle + 1 } else { high = middle }
        }
        var index = low
        while index < spans.count, spans[index].startNs < endNs {
            let span = spans[index]
            let from = max(span.startNs, startNs), to = min(span.endNs, endNs)
            if to > from { result[span.state] += to - from }
            index += 1
        }
        return result
    }
}
