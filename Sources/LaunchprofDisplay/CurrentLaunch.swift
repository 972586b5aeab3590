import LaunchprofReport
import Synchronization

/// The launch a display observer watches, shared by its thread and the session's: a generation
/// number (one per launch), the launched pid, where events go, and the events seen.
final class CurrentLaunch: Sendable {
    struct State {
        var generation = 0
        var launchedPid: (@Sendable () -> Int32)?
        var onEvent: (@Sendable (DisplayEvent) -> Void)?
        var events: [DisplayEvent] = []
    }

    let state = Mutex(State())

    func begin(launchedPid: @escaping @Sendable () -> Int32, onEvent: @escaping @Sendable (DisplayEvent) -> Void) {
        state.withLock { state in
            state.generation += 1
            state.launchedPid = launchedPid
            state.onEvent = onEvent
            state.events = []
        }
    }

    func end() -> [DisplayEvent] {
        state.withLock { state in
            state.launchedPid = nil
            state.onEvent = nil
            defer { state.events = [] }
            return state.events
        }
    }

    /// Records `event` for the launch of `generation` (if it is still the current one) and hands
    /// it to the listener, outside the lock.
    func deliver(_ event: DisplayEvent, generation: Int) {
        let listener = state.withLock { state -> (@Sendable (DisplayEvent) -> Void)? in
            guard state.generation == generation, state.onEvent != nil else { return nil }
            state.events.append(event)
            return state.onEvent
        }
        listener?(event)
    }
}
