import LaunchprofReport
import LaunchprofTracing

/// Puts the observer's own costs into the phases they fell in.
enum ObserverAccounting {
    /// Each span phase gets the sum of the costs at times in [start, end): a stop or hit at a
    /// boundary delays what follows it, so it counts in the phase that starts there. A cost
    /// inside nested phases (an app phase within `extendedLaunch`) counts in each. Instants get
    /// none.
    static func assign(_ costs: [ObserverCost], spawnedAtNs: UInt64, to phases: [LaunchPhase]) -> [LaunchPhase] {
        phases.map { phase in
            guard phase.durationNs > 0 else { return phase }
            var phase = phase
            var total: UInt64 = 0
            for cost in costs where cost.atNs >= spawnedAtNs {
                let at = cost.atNs - spawnedAtNs
                if at >= phase.startNs, at < phase.endNs { total += cost.costNs }
            }
            phase.observerNs = total
            return phase
        }
    }
}
