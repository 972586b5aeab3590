import LaunchprofAnalysis
import LaunchprofReport

/// Small reports built from scripted events, shared by the writer, renderer and golden tests.
enum ReportSamples {
    static let target = LaunchReport.Target(
        path: "/opt/demo/app", arguments: ["--fast", "a b"], buildID: "0123456789abcdef")
    static let host = LaunchReport.Host(
        kernel: "6.1.0-test", cpu: "Test CPU @ 2.00GHz", cores: 2, libc: "glibc 2.36")
    static let mode = LaunchReport.Mode(runs: 3, warmup: 1, readiness: .automatic, timeoutNs: 5_000_000_000)

    /// Run `index` of the scripted dynamic launch, every time stretched by (10 + index) / 10.
    static func run(_ index: Int) throws -> LaunchRun {
        let stretch = UInt64(10 + index)
        let t0 = PhaseTimelineTests.t0
        let events = PhaseTimelineTests.dynamicLaunch.map { event -> LaunchEvent in
            func s(_ at: UInt64) -> UInt64 { t0 + (at - t0) * stretch / 10 }
            switch event {
            case .spawned(let at): return .spawned(atNs: s(at))
            case .imageStarted(let image, let path, let at): return .imageStarted(image: image, path: path, atNs: s(at))
            case .relocationStarted(let at): return .relocationStarted(atNs: s(at))
            case .relocationFinished(let at): return .relocationFinished(atNs: s(at))
            case .objectInitStarted(let path, let at): return .objectInitStarted(path: path, atNs: s(at))
            case .entryReached(let at): return .entryReached(atNs: s(at))
            case .programInitStarted(let at): return .programInitStarted(atNs: s(at))
            case .mainReached(let at): return .mainReached(atNs: s(at))
            case .hook(let hook): return .hook(HookEvent(kind: hook.kind, name: hook.name, atNs: s(hook.atNs)))
            case .ready(let reason, let at): return .ready(reason: reason, atNs: s(at))
            case .display(var display):
                display.atNs = s(display.atNs)
                return .display(display)
            case .probed(var span):
                span.startNs = s(span.startNs)
                span.endNs = span.endNs.map(s)
                return .probed(span)
            case .unobservable: return event
            case .exited(let status, let at): return .exited(status, atNs: s(at))
            }
        }
        return LaunchRun(
            index: index, pid: 4_000 + Int32(index), timeline: try PhaseTimeline(events: events))
    }

    static func report(runs count: Int = 3) throws -> LaunchReport {
        LaunchReport(target: target, host: host, mode: mode, runs: try (0..<count).map(run))
    }
}
