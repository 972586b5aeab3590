import LaunchprofReport

/// Merges two streams of one launch's events into one: the only way launchprof does it (the
/// uprobe observer's boundary events among the process control's; then the monitor's hook,
/// readiness and display events among the tracer's).
///
/// The rules:
/// - `ordered` keeps its order: it is in the order observed, and an event without a time (an
///   unobservable phase) stays right after the event before it;
/// - `placed` is put in time order (stably; an event without a time counts as time 0), and each
///   of its events goes before the first timed `ordered` event that is strictly later: **at equal
///   times the `ordered` event comes first** (an image starts before any hit inside it);
/// - **the exit stays last**: `placed` events later than an `ordered` exit (a grandchild's hook)
///   go just before it.
public enum EventMerge {
    /// Merges launch events (see the rules above).
    public static func merge(_ ordered: [LaunchEvent], _ placed: [LaunchEvent]) -> [LaunchEvent] {
        merge(ordered, placed, time: \.timeNs) { event in
            if case .exited = event { true } else { false }
        }
    }

    /// Merges any events, given how to read an event's time and whether it is the exit.
    public static func merge<Event>(
        _ ordered: [Event], _ placed: [Event], time: (Event) -> UInt64?, isExit: (Event) -> Bool
    ) -> [Event] {
        guard !placed.isEmpty else { return ordered }
        var result: [Event] = []
        result.reserveCapacity(ordered.count + placed.count)
        let sorted = placed.enumerated().sorted { a, b in
            (time(a.element) ?? 0, a.offset) < (time(b.element) ?? 0, b.offset)
        }
        var pending = sorted.map(\.element)[...]
        for event in ordered {
            if let at = time(event) {
                while let next = pending.first, time(next) ?? 0 < at {
                    result.append(next)
                    pending.removeFirst()
                }
            }
            result.append(event)
        }
        if let last = result.last, isExit(last), !pending.isEmpty {
            result.removeLast()
            result += pending
            result.append(last)
        } else {
            result += pending
        }
        return result
    }
}
