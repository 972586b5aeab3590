import LaunchprofReport

/// Turns the boundary hits of one launch into launch events, with the rules both observers share:
/// - the first hit of each boundary counts (a probe fires at every call; a breakpoint re-armed
///   in a later launch must not count twice);
/// - relocation ends at the first other boundary hit after it started (the loader's first call
///   into an initializer, or the program);
/// - nothing counts after `main`: the hit that reaches it is the last one recorded;
/// - every new image (an exec) starts over.
///
/// A value with no system calls: the observers feed it hits and keep the events it returns.
public struct BoundaryRecorder: Sendable, Equatable {
    private var seen: Set<Boundary> = []
    private var awaitingRelocationEnd = false
    /// `main` was reached in the current image.
    public private(set) var reachedMain = false

    public init() {}

    /// An exec replaced the image: its boundaries are new.
    public mutating func startImage() {
        self = BoundaryRecorder()
    }

    /// One hit at `atNs`: the boundaries it marks (one address can mark several), in the order
    /// they were armed. Returns the events to record, in order.
    public mutating func hit(_ boundaries: [Boundary], atNs time: UInt64) -> [LaunchEvent] {
        guard !reachedMain else { return [] }
        var events: [LaunchEvent] = []
        for boundary in boundaries where seen.insert(boundary).inserted {
            if awaitingRelocationEnd, boundary != .relocationStart {
                awaitingRelocationEnd = false
                events.append(.relocationFinished(atNs: time))
            }
            switch boundary {
            case .relocationStart:
                events.append(.relocationStarted(atNs: time))
                awaitingRelocationEnd = true
            case .objectInit(let path): events.append(.objectInitStarted(path: path, atNs: time))
            case .entry: events.append(.entryReached(atNs: time))
            case .libcStartMain: break
            case .programInit: events.append(.programInitStarted(atNs: time))
            case .main:
                events.append(.mainReached(atNs: time))
                reachedMain = true
            }
        }
        return events
    }
}
