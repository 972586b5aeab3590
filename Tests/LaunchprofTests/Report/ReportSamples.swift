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
            return event.mappingTime(s)
        }
        return LaunchRun(
            index: index, pid: 4_000 + Int32(index), timeline: try PhaseTimeline(events: events))
    }

    static func report(runs count: Int = 3) throws -> LaunchReport {
        LaunchReport(target: target, host: host, mode: mode, runs: try (0..<count).map(run))
    }
}
