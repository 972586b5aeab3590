import LaunchprofELF
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
            hits.complete(&results[index], drained: drained[hits.pid] ?? UprobeObserver.Drained())
        }
    }

    func complete(_ result: inout TraceResult, drained: UprobeObserver.Drained) {
        let observation = observation(of: result.events, drained: drained)
        result.events = observation.events
        result.observerCosts = (result.observerCosts + observation.costs).sorted { $0.atNs < $1.atNs }
        result.lostSamples = observation.lostSamples
        result.pendingUprobeHits = nil
    }

    /// The tracer's `events` with the boundaries the hits mark merged in, the spans the runtime
    /// probes mark (each image's hits by its own plan), and each hit's cost.
    func observation(of events: [LaunchEvent], drained: UprobeObserver.Drained) -> LaunchObservation {
        let images = zip(imageStarts, plans).map { UprobeLaunchEvents.Image(startNs: $0, plan: $1) }
        let observed = UprobeLaunchEvents(samples: drained.samples, images: images, calibration: calibration)
        var placed = observed.events
        // No span a dropped boundary hit could have ended is measured (PhaseTimeline).
        placed += drained.losses.map { .hitsLost(count: $0.count, fromNs: $0.beginNs, toNs: $0.endNs) }
        var costs = observed.costs
        var files = ObjectFiles()
        for (number, image) in images.enumerated() {
            guard let plan = image.plan?.runtime, !plan.probes.isEmpty else { continue }
            let end = number + 1 < images.count ? images[number + 1].startNs : UInt64.max
            let hits = drained.runtime.filter { $0.timeNs >= image.startNs && $0.timeNs < end }
            guard !hits.isEmpty else { continue }
            let emulated = Dictionary(plan.probes.map { ($0.key, $0.emulated) }, uniquingKeysWith: { first, _ in first })
            for hit in hits {
                costs.append(ObserverCost(atNs: hit.timeNs, costNs: calibration.hitNs(emulated: emulated[hit.key] ?? false)))
            }
            let spans = RuntimeRecorder(plan: plan, pid: pid).spans(hits) { files.maps($0, $1) }
            placed += spans.map { .probed($0) }
            if let (phase, reason) = RuntimeRecorder.missingDidFinishLaunching(spans) {
                placed.append(.unobservable(phase: phase, reason: reason))
            }
        }
        // A note without a time (a phase no call ended) goes after the spawn, never before it: a
        // merge counts it as time 0, and a run whose first event is not its spawn has no
        // timeline to place its samples and costs on (gtk3-demo's call stack tree was empty).
        var merged = EventMerge.merge(events, placed.filter { $0.timeNs != nil })
        merged.insert(contentsOf: placed.filter { $0.timeNs == nil }, at: min(1, merged.count))
        return LaunchObservation(events: merged, costs: costs.sorted { $0.atNs < $1.atNs }, lostSamples: drained.lost)
    }
}

/// The ELF files of a launch's objects, each read once: where a dlopen's return address lies.
struct ObjectFiles {
    private var images: [String: ELFImage?] = [:]

    /// Whether the file at `path` maps the unrelocated `address` (false when it cannot be read).
    mutating func maps(_ path: String, _ address: UInt64) -> Bool {
        if images[path] == nil { images[path] = .some(try? ELFImage.read(path: path)) }
        return images[path]??.fileOffset(ofAddress: address) != nil
    }
}
