extension LaunchEvent {
    /// The event's time (CLOCK_MONOTONIC ns), for the events that have one: all but an
    /// unobservable phase's note. Hits lost: when the loss ended (its window may begin before the
    /// spawn, at a ring's previous record of another process).
    public var timeNs: UInt64? {
        switch self {
        case .spawned(let t), .imageStarted(_, _, let t), .relocationStarted(let t),
            .relocationFinished(let t), .objectInitStarted(_, let t), .entryReached(let t),
            .programInitStarted(let t), .mainReached(let t), .ready(_, let t), .endedByLaunchprof(_, let t),
            .exited(_, let t):
            t
        case .hook(let hook): hook.atNs
        case .probed(let span): span.startNs
        case .display(let event): event.atNs
        case .hitsLost(_, _, let t): t
        case .unobservable: nil
        }
    }

    /// The same event with its time passed through `transform` (an unobservable note unchanged).
    public func mappingTime(_ transform: (UInt64) -> UInt64) -> LaunchEvent {
        switch self {
        case .spawned(let t): .spawned(atNs: transform(t))
        case .imageStarted(let image, let path, let t): .imageStarted(image: image, path: path, atNs: transform(t))
        case .relocationStarted(let t): .relocationStarted(atNs: transform(t))
        case .relocationFinished(let t): .relocationFinished(atNs: transform(t))
        case .objectInitStarted(let path, let t): .objectInitStarted(path: path, atNs: transform(t))
        case .entryReached(let t): .entryReached(atNs: transform(t))
        case .programInitStarted(let t): .programInitStarted(atNs: transform(t))
        case .mainReached(let t): .mainReached(atNs: transform(t))
        case .hook(let hook): .hook(HookEvent(kind: hook.kind, name: hook.name, atNs: transform(hook.atNs)))
        case .probed(let span):
            .probed(ProbedSpan(
                name: span.name, startNs: transform(span.startNs), endNs: span.endNs.map(transform),
                object: span.object, caller: span.caller, source: span.source, thread: span.thread))
        case .display(let event):
            .display(DisplayEvent(kind: event.kind, atNs: transform(event.atNs), pid: event.pid, window: event.window, display: event.display))
        case .ready(let reason, let t): .ready(reason: reason, atNs: transform(t))
        case .hitsLost(let count, let from, let to): .hitsLost(count: count, fromNs: transform(from), toNs: transform(to))
        case .unobservable: self
        case .endedByLaunchprof(let reason, let t): .endedByLaunchprof(reason: reason, atNs: transform(t))
        case .exited(let status, let t): .exited(status, atNs: transform(t))
        }
    }
}
