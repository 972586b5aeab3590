import Foundation
import LaunchprofCore
import LaunchprofReport
import Synchronization
@testable import LaunchprofTracing

/// Sessions driven by a `ScriptedTracer`: a real program to locate and analyse (the session
/// reads its ELF closure), no child spawned, the session's real monitor and hook channel.
enum SessionScript {
    /// A program every Debian machine has, for the session's ELF analysis only.
    static let program = "/bin/true"

    static func configuration(runs: Int = 1, warmup: Int = 0) -> RunConfiguration {
        var configuration = RunConfiguration(program: program, arguments: [])
        configuration.runs = runs
        configuration.warmup = warmup
        configuration.observer = .ptrace
        configuration.pinCPU = false
        configuration.inheritedEnvironment = ["PATH": "/usr/bin:/bin"]
        return configuration
    }

    /// A dynamic launch as the ptrace observer records it: exec, relocation, one library's
    /// initializer, the program's, main, the exit (times in ns from the script's base).
    static func launch(pid: Int32 = 4_000, scale: UInt64 = 1, exit: ExitStatus = .exited(code: 0)) -> ScriptedTracer.Launch {
        ScriptedTracer.Launch(
            pid: pid,
            events: [
                .spawned(atNs: 0),
                .imageStarted(image: 0, path: "/opt/app/bin/app", atNs: 400_000 * scale),
                .relocationStarted(atNs: 900_000 * scale),
                .relocationFinished(atNs: 1_300_000 * scale),
                .objectInitStarted(path: "/opt/app/lib/libwidget.so.1", atNs: 1_300_000 * scale),
                .programInitStarted(atNs: 1_450_000 * scale),
                .mainReached(atNs: 1_500_000 * scale),
                .exited(exit, atNs: 3_000_000 * scale),
            ],
            hookLines: [
                ("begin", 1_700_000 * scale, "restoreState"),
                ("end", 1_900_000 * scale, "restoreState"),
                ("first-frame", 2_100_000 * scale, ""),
            ],
            pauseNs: 120_000,
            observerCosts: [
                ObserverCost(atNs: 400_000 * scale, costNs: 30_000),
                ObserverCost(atNs: 900_000 * scale, costNs: 40_000),
                ObserverCost(atNs: 1_300_000 * scale, costNs: 25_000),
                ObserverCost(atNs: 1_500_000 * scale, costNs: 25_000),
            ])
    }

    /// Runs `session` and returns its measured runs, in order.
    static func runs(_ session: RunSession) throws -> [LaunchRun] {
        let collected = RunCollector()
        _ = try LaunchPipeline(session, sinks: [collected]).run()[0].get()
        return collected.runs
    }

    /// The JSON report of `runs` as `launchprof run --json` writes it, with a fixed target and
    /// host, and each spawn's boot-time peer (which depends on the machine's suspensions) made
    /// equal to its monotonic time.
    static func reportBytes(_ runs: [LaunchRun], mode: LaunchReport.Mode) throws -> [UInt8] {
        let output = InMemoryReportOutput()
        let writer = try LaunchReportWriter(
            output: output, target: .init(path: "/opt/app/bin/app", arguments: ["--scripted"], buildID: nil),
            host: .init(kernel: "6.1.0-test", cpu: "Test CPU", cores: 2, libc: "glibc 2.36"), mode: mode)
        var summary = LaunchSummaryBuilder()
        for var run in runs {
            run.spawnedAt = run.spawnedAt.map { SpawnInstant(monotonicNs: $0.monotonicNs, boottimeNs: $0.monotonicNs) }
            try writer.append(run)
            summary.add(run)
        }
        try writer.finish(summary: summary.summary)
        return output.bytes
    }
}
