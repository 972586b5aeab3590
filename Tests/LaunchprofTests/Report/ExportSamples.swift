import LaunchprofReport
import LaunchprofRenderers

/// Constructed runs for the exporters: every optional path the tracer cannot produce yet
/// (prewarmed launches, resume cycles, hangs, sampled stacks) with known values.
enum ExportSamples {
    static let ms: UInt64 = 1_000_000

    /// A call stack tree: main → {parse (3 samples) → read (1), draw (2)}; 6 samples in all.
    static let tree = CallStackTree(callStacks: [
        .init(threadAttributed: true, callStackRootFrames: [
            .init(
                binaryName: "app", buildID: "0123456789abcdef0123456789abcdef01234567", address: 0x5555_0000_1000, offsetIntoBinaryTextSegment: 0x1000,
                sampleCount: 6, symbol: "main",
                subFrames: [
                    .init(
                        binaryName: "app", buildID: "0123456789abcdef0123456789abcdef01234567", address: 0x5555_0000_2000,
                        offsetIntoBinaryTextSegment: 0x2000, sampleCount: 3, symbol: "parse",
                        subFrames: [
                            .init(
                                binaryName: "libc.so.6", buildID: "feed", address: 0x7f00_0000_3000,
                                offsetIntoBinaryTextSegment: 0x3000, sampleCount: 1, symbol: "read")
                        ]),
                    .init(
                        binaryName: "app", buildID: "0123456789abcdef0123456789abcdef01234567", address: 0x5555_0000_4000,
                        offsetIntoBinaryTextSegment: 0x4000, sampleCount: 2),
                ])
        ])
    ])

    /// One run: loader phases, a library's initializers, app phases (two overlapping without
    /// nesting when `overlapping`), main and first frame instants, extended tasks when `tasks`.
    static func run(
        index: Int, firstFrameMs: UInt64, optimizedMs: UInt64? = nil, resumeMs: UInt64? = nil,
        tasks: Bool = true, hangsMs: [UInt64] = [], sampled: Bool = false, overlapping: Bool = false
    ) -> LaunchRun {
        let ff = firstFrameMs * ms
        var phases: [LaunchPhase] = [
            .init(name: "exec", startNs: 0, durationNs: 200_000),
            .init(name: "loader.map", startNs: 200_000, durationNs: 300_000),
            .init(name: "loader.relocate", startNs: 500_000, durationNs: 400_000),
            .init(name: "loader.init", startNs: 900_000, durationNs: 100_000, object: "/usr/lib/x86_64-linux-gnu/libc.so.6"),
            .init(name: "program.init", startNs: 1_000_000, durationNs: 1_000_000),
            .init(name: "main", startNs: 2_000_000, durationNs: 0),
            .init(name: "willFinishLaunching", startNs: 2_100_000, durationNs: 1_000_000),
            .init(name: "didFinishLaunching", startNs: 3_200_000, durationNs: ff - 3_300_000),
        ]
        if overlapping {
            // a: 3.3–3.8 ms, b: 3.5–4.0 ms: neither nests in the other.
            phases.append(.init(name: "loadA", startNs: 3_300_000, durationNs: 500_000))
            phases.append(.init(name: "loadB", startNs: 3_500_000, durationNs: 500_000))
        }
        phases.append(.init(name: "firstFrame", startNs: ff, durationNs: 0))
        var extended = ff
        if tasks {
            phases.append(.init(name: "extendedLaunch", startNs: 2_500_000, durationNs: ff, task: "warm-cache"))
            phases.append(.init(name: "extendedLaunch", startNs: 2_600_000, durationNs: ff + 2 * ms, task: "sync"))
            extended = 2_600_000 + ff + 2 * ms
        }
        var run = LaunchRun(
            index: index, pid: 1000 + Int32(index), exitStatus: RunExit(code: 0), phases: phases,
            metrics: LaunchMetrics(
                timeToMainNs: 2_000_000, timeToFirstFrameNs: ff, extendedLaunchNs: extended,
                exitNs: extended + ms, optimizedTimeToFirstFrameNs: optimizedMs.map { $0 * ms },
                resumeTimeNs: resumeMs.map { $0 * ms }),
            tracerPauseNs: 50_000)
        if !hangsMs.isEmpty {
            run.flags = hangsMs.enumerated().map { offset, duration in
                LaunchFlag(
                    kind: .hang, phase: "didFinishLaunching", function: "syncDatabase", object: "app",
                    durationNs: duration * ms, syscall: "fsync", startNs: offset == 0 ? 3_300_000 : nil,
                    advice: "move it off the main thread")
            }
        }
        if sampled { run.callStackTree = tree }
        return run
    }

    static func report(_ runs: [LaunchRun]) -> LaunchReport {
        LaunchReport(
            target: .init(path: "/opt/demo/app", arguments: ["--fast"], buildID: "0123456789abcdef"),
            host: .init(kernel: "6.1.0-test", cpu: "Test CPU @ 2.00GHz", cores: 2, libc: "glibc 2.36"),
            mode: .init(runs: runs.count, warmup: 0), runs: runs)
    }

    static let context = MetricKitPayloadBuilder.Context(
        distribution: "Debian GNU/Linux 12 (bookworm)", architecture: "x86_64", regionFormat: "US",
        beganAtSeconds: 1_700_000_000, endedAtSeconds: 1_700_000_042)
}
