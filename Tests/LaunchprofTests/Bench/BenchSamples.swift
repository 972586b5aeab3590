import LaunchprofReport

/// Reports built from plain per-run values, for the comparison, merge and export tests.
enum BenchSamples {
    static let target = LaunchReport.Target(path: "/opt/demo/app", arguments: [], buildID: "00ff00ff")
    static let host = LaunchReport.Host(kernel: "6.1.0-test", cpu: "Test CPU", cores: 2, libc: "glibc 2.36", name: "ci-1")

    /// A run whose first frame is at `frameNs`, with a didFinishLaunching phase of `workNs`
    /// ending there and main at `frameNs − workNs`.
    static func run(_ index: Int, frameNs: UInt64, workNs: UInt64, failed: Bool = false) -> LaunchRun {
        let main = frameNs - workNs
        return LaunchRun(
            index: index, pid: Int32(1_000 + index), exitStatus: RunExit(code: failed ? 1 : 0),
            phases: [
                LaunchPhase(name: "main", startNs: main, durationNs: 0),
                LaunchPhase(name: "didFinishLaunching", startNs: main, durationNs: workNs),
                LaunchPhase(name: "firstFrame", startNs: frameNs, durationNs: 0),
            ],
            metrics: LaunchMetrics(timeToMainNs: main, timeToFirstFrameNs: frameNs, extendedLaunchNs: frameNs, exitNs: frameNs + 50_000))
    }

    /// A report of `count` runs: didFinishLaunching takes `workNs` × (1 + noise), main comes
    /// after 1 ms × (1 + noise), the noise drawn from `generator` (uniform, ±`noise`).
    static func report(
        runs count: Int, workNs: UInt64, noise: Double, generator: inout SeededGenerator, host: LaunchReport.Host = host,
        target: LaunchReport.Target = target, cold: Bool = false
    ) -> LaunchReport {
        let runs = (0..<count).map { index -> LaunchRun in
            let work = UInt64(Double(workNs) * (1 + Double.random(in: -noise...noise, using: &generator)))
            let main = UInt64(1_000_000 * (1 + Double.random(in: -noise...noise, using: &generator)))
            return run(index, frameNs: main + work, workNs: work)
        }
        return LaunchReport(target: target, host: host, mode: .init(runs: count, cold: cold), runs: runs)
    }
}

/// SplitMix64: reproducible draws, so a statistical test fails the same way every time.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
