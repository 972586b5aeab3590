import LaunchprofReport
import LaunchprofTracing

/// Which observer times the pre-main boundaries (`run --observer`).
public enum ObserverChoice: String, Sendable, CaseIterable {
    /// Where uprobes are permitted (root or CAP_SYS_ADMIN, and the uprobe PMU), the
    /// one that costs a launch less on this host by measurement (a uprobe hit against a ptrace
    /// stop); elsewhere ptrace.
    case auto
    /// Uprobe perf events: the child never stops at a boundary.
    case uprobe
    /// ptrace breakpoints: works unprivileged.
    case ptrace
}

/// The observer a session settled on, and why.
struct ResolvedObserver {
    var uprobes: UprobeRequest?
    var reason: String

    var name: String { uprobes == nil ? "ptrace" : "uprobe" }

    /// Resolves `choice` on this host; `.uprobe` where it cannot run is an error.
    static func resolve(_ choice: ObserverChoice, sysfsRoot: String) throws(RunError) -> ResolvedObserver {
        if choice == .ptrace { return ResolvedObserver(uprobes: nil, reason: "--observer ptrace") }
        do throws(UprobeError) {
            let type = try UprobeSupport.pmuType(sysfsRoot: sysfsRoot).get()
            let calibration = try UprobeCalibration.measured(pmuType: type)
            let decision = choice == .auto ? Self.cheaper(calibration) : (uprobes: true, reason: "--observer uprobe")
            guard decision.uprobes else { return ResolvedObserver(uprobes: nil, reason: decision.reason) }
            let request = UprobeRequest(observer: .shared(pmuType: type), calibration: calibration)
            return ResolvedObserver(uprobes: request, reason: decision.reason)
        } catch {
            guard choice == .auto else { throw .observer(error) }
            let why: String
            if case .unavailable(let reason) = error { why = reason } else { why = error.description }
            return ResolvedObserver(uprobes: nil, reason: "auto: \(why)")
        }
    }

    /// `auto` where both observers can run: each boundary costs the child one uprobe hit or one
    /// ptrace stop (both observers stop at the exec alike), so the cheaper of the two measured
    /// here decides. Most probes sit on emulated instructions (`ProbePlacement`). Without a
    /// measured stop, uprobes (a stop costs several µs on every host measured so far).
    static func cheaper(_ calibration: UprobeCalibration) -> (uprobes: Bool, reason: String) {
        let hit = DurationText.text(calibration.emulatedHitNs)
        guard let stopNs = calibration.ptraceStopNs else {
            return (true, "auto: perf events permitted, a uprobe hit costs \(hit) here")
        }
        let stop = DurationText.text(stopNs)
        if stopNs < calibration.emulatedHitNs {
            return (false, "auto: a ptrace stop costs \(stop) here, a uprobe hit \(hit)")
        }
        return (true, "auto: a uprobe hit costs \(hit) here, a ptrace stop \(stop)")
    }
}
