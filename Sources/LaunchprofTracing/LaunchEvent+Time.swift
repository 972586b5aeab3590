import LaunchprofReport

extension LaunchEvent {
    /// The event's time (CLOCK_MONOTONIC ns), for the events that have one: all but an
    /// unobservable phase's note.
    public var timeNs: UInt64? {
        switch self {
        case .spawned(let t), .imageStarted(_, _, let t), .relocationStarted(let t),
            .relocationFinished(let t), .objectInitStarted(_, let t), .entryReached(let t),
            .programInitStarted(let t), .mainReached(let t), .ready(_, let t), .exited(_, let t):
            t
        case .hook(let hook): hook.atNs
        case .probed(let span): span.startNs
        case .display(let event): event.atNs
        case .unobservable: nil
        }
    }
}
