import CLaunchprof
import LaunchprofReport
import Synchronization
@testable import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// A tracer that spawns nothing: each `trace` plays the next scripted launch. It writes the
/// launch's hook lines into the request's hook channel (as the child would, so the session's
/// real monitor reads them), holds a prewarm freeze at the scripted `main` as `LaunchTracer`
/// does, and returns the scripted result. Times in the script are offsets from `base`.
final class ScriptedTracer: LaunchTracing, @unchecked Sendable {
    /// One scripted launch.
    struct Launch {
        var pid: Int32 = 4_000
        /// The tracer's events, times from `base`.
        var events: [LaunchEvent]
        /// Lines the "child" writes to the hook channel (`<kind> <ns from base> [name]`).
        var hookLines: [(kind: String, atNs: UInt64, name: String)] = []
        var unplannedImages: [String] = []
        var leftoverProcesses: [Int32] = []
        var pauseNs: UInt64 = 0
        var observerCosts: [ObserverCost] = []
        var lostSamples: UInt64 = 0
    }

    /// Where scripted times start: a fixed instant (golden reports), or the clock at each trace
    /// (prewarm, whose hold is real time).
    enum Base {
        case fixed(UInt64)
        case now
    }

    private let state: Mutex<(script: [Launch], requests: [TraceRequest])>
    private let base: Base

    init(_ script: [Launch], base: Base = .fixed(1_000_000_000)) {
        state = Mutex((script, []))
        self.base = base
    }

    /// The requests the session made, in order.
    var requests: [TraceRequest] { state.withLock { $0.requests } }
    /// Launches not played yet.
    var remaining: Int { state.withLock { $0.script.count } }

    func trace(
        _ request: TraceRequest, planForImage: (String) -> ImagePlan?, control: TraceControl
    ) throws(TracerError) -> TraceResult {
        let next = state.withLock { state -> Launch? in
            state.requests.append(request)
            return state.script.isEmpty ? nil : state.script.removeFirst()
        }
        guard let launch = next else {
            throw .unexpectedStop(pid: 0, detail: "the script has no launch left for \(request.executable)")
        }
        let origin: UInt64
        switch base {
        case .fixed(let time): origin = time
        case .now: origin = lp_now_ns()
        }
        let events = launch.events.map { $0.shifted(by: origin) }
        if request.hookDescriptor >= 0, !launch.hookLines.isEmpty {
            let text = launch.hookLines.map { "\($0.kind) \(origin + $0.atNs)\($0.name.isEmpty ? "" : " " + $0.name)\n" }.joined()
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(request.hookDescriptor, $0.baseAddress, $0.count) }
        }
        if let freeze = request.freeze, freeze.point == .main {
            for case .mainReached(let time) in events {
                if case .spawned(let spawnedAt) = events.first { freeze.hold(launch.pid, spawnedAt, time) }
            }
        }
        var exit: ExitStatus = .killedByLaunchprof(signal: SIGKILL, reason: "tracer failed")
        for case .exited(let status, _) in events { exit = status }
        var result = TraceResult(
            pid: launch.pid, events: events, exitStatus: exit, leftoverProcesses: launch.leftoverProcesses,
            unplannedImages: launch.unplannedImages, crashStack: [], crashMappings: [], pauseNs: launch.pauseNs)
        result.observerCosts = launch.observerCosts.map { ObserverCost(atNs: origin + $0.atNs, costNs: $0.costNs) }
        result.lostSamples = launch.lostSamples
        return result
    }
}

extension LaunchEvent {
    /// The same event `offset` ns later.
    fileprivate func shifted(by offset: UInt64) -> LaunchEvent {
        switch self {
        case .spawned(let t): return .spawned(atNs: t + offset)
        case .imageStarted(let image, let path, let t): return .imageStarted(image: image, path: path, atNs: t + offset)
        case .relocationStarted(let t): return .relocationStarted(atNs: t + offset)
        case .relocationFinished(let t): return .relocationFinished(atNs: t + offset)
        case .objectInitStarted(let path, let t): return .objectInitStarted(path: path, atNs: t + offset)
        case .entryReached(let t): return .entryReached(atNs: t + offset)
        case .programInitStarted(let t): return .programInitStarted(atNs: t + offset)
        case .mainReached(let t): return .mainReached(atNs: t + offset)
        case .hook(var hook):
            hook.atNs += offset
            return .hook(hook)
        case .display(var event):
            event.atNs += offset
            return .display(event)
        case .ready(let reason, let t): return .ready(reason: reason, atNs: t + offset)
        case .probed(var span):
            span.startNs += offset
            span.endNs = span.endNs.map { $0 + offset }
            return .probed(span)
        case .unobservable: return self
        case .exited(let status, let t): return .exited(status, atNs: t + offset)
        }
    }
}
