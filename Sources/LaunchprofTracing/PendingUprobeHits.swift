import LaunchprofReport

/// A launch's uprobe hits not read yet (`TraceRequest.defersUprobeHits`): what turns them into
/// its boundary events once they are. A session reads the hits of several launches in one
/// exchange with the probe holder (`completeAll`) instead of one round trip, two context
/// switches, after every launch.
public struct PendingUprobeHits: Sendable {
    let pid: Int32
    let observer: UprobeObserver
    let calibration: UprobeCalibration
    /// Each image's exec time and plan, in exec order.
    let imageStarts: [UInt64]
    let plans: [ImagePlan?]

    /// Reads the pending hits of every result that has some, in one exchange, and merges each
    /// launch's boundary events, hit costs and lost hits into its result.
    public static func completeAll(_ results: inout [TraceResult]) {
        let pending = results.compactMap(\.pendingUprobeHits)
        guard let observer = pending.first?.observer else { return }
        let drained = observer.drain(pids: pending.map(\.pid))
        for index in results.indices {
            guard let hits = results[index].pendingUprobeHits else { continue }
            hits.complete(&results[index], drained: drained[hits.pid] ?? ([], 0))
        }
    }

    func complete(_ result: inout TraceResult, drained: (samples: [UprobeObserver.Sample], lost: UInt64)) {
        let observation = observation(of: result.events, drained: drained)
        result.events = observation.events
        result.observerCosts = (result.observerCosts + observation.costs).sorted { $0.atNs < $1.atNs }
        result.lostSamples = observation.lostSamples
        result.pendingUprobeHits = nil
    }

    /// The tracer's `events` with the boundaries the hits mark merged in, and each hit's cost.
    func observation(
        of events: [LaunchEvent], drained: (samples: [UprobeObserver.Sample], lost: UInt64)
    ) -> LaunchObservation {
        let images = zip(imageStarts, plans).map { UprobeLaunchEvents.Image(startNs: $0, plan: $1) }
        let observed = UprobeLaunchEvents(samples: drained.samples, images: images, calibration: calibration)
        return LaunchObservation(
            events: EventMerge.merge(events, observed.events), costs: observed.costs, lostSamples: drained.lost)
    }
}
