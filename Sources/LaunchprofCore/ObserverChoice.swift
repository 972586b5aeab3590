import LaunchprofTracing

/// Which observer times the pre-main boundaries (`run --observer`).
public enum ObserverChoice: String, Sendable, CaseIterable {
    /// Uprobes where permitted (root, CAP_PERFMON or CAP_SYS_ADMIN, and the uprobe PMU), else ptrace.
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
            let request = UprobeRequest(observer: .shared(pmuType: type), calibration: calibration)
            let reason = choice == .uprobe
                ? "--observer uprobe" : "auto: perf events permitted and the uprobe PMU present"
            return ResolvedObserver(uprobes: request, reason: reason)
        } catch {
            guard choice == .auto else { throw .observer(error) }
            let why: String
            if case .unavailable(let reason) = error { why = reason } else { why = error.description }
            return ResolvedObserver(uprobes: nil, reason: "auto: \(why)")
        }
    }
}
