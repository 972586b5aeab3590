import LaunchprofReport

/// launchprof's own cost at one moment of a launch: a stop (ptrace) or a probe hit (uprobe).
public struct ObserverCost: Sendable, Equatable {
    public var atNs: UInt64
    public var costNs: UInt64

    public init(atNs: UInt64, costNs: UInt64) {
        self.atNs = atNs
        self.costNs = costNs
    }
}

/// The uprobe observer's side of one launch: the probe hits of the child turned into the same
/// boundary events the ptrace observer records, by the same `BoundaryRecorder`, and each hit's
/// cost (every hit costs, counted or not).
public struct UprobeLaunchEvents {
    /// An image of the launch: when its exec completed and its plan.
    public struct Image {
        public var startNs: UInt64
        public var plan: ImagePlan?

        public init(startNs: UInt64, plan: ImagePlan?) {
            self.startNs = startNs
            self.plan = plan
        }
    }

    public var events: [LaunchEvent] = []
    public var costs: [ObserverCost] = []

    /// - Parameter samples: the child's hits, oldest first.
    public init(samples: [UprobeObserver.Sample], images: [Image], calibration: UprobeCalibration) {
        var index = 0
        for (number, image) in images.enumerated() {
            let end = number + 1 < images.count ? images[number + 1].startNs : UInt64.max
            var actions: [UprobeTarget.Key: [UprobeTarget]] = [:]
            for target in image.plan?.uprobes ?? [] { actions[target.key, default: []].append(target) }
            var recorder = BoundaryRecorder()
            while index < samples.count, samples[index].timeNs < end {
                let sample = samples[index]
                index += 1
                guard sample.timeNs >= image.startNs, let targets = actions[sample.key] else { continue }
                costs.append(ObserverCost(
                    atNs: sample.timeNs, costNs: calibration.hitNs(emulated: targets[0].emulated)))
                events += recorder.hit(targets.map(\.action), atNs: sample.timeNs)
            }
        }
    }
}
