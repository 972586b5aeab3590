// The report path for 10,000 runs: timelines → runs → streamed JSON report in a temporary file
// (what `launchprof run -r 10000 --json` does after tracing: the atomic file writer is in
// LaunchprofCore), and the summary statistics alone.
import Benchmark
import LaunchprofAnalysis
import LaunchprofCore
import LaunchprofReport

#if canImport(Glibc)
import Glibc
#endif

let runCount = 10_000

let benchmarks: @Sendable () -> Void = {
    let inputs = SyntheticRuns.events(count: runCount)
    let runs = inputs.enumerated().compactMap { index, events in
        (try? PhaseTimeline(events: events)).map { LaunchRun(index: index, pid: Int32(1000 + index), timeline: $0) }
    }
    let target = LaunchReport.Target(path: "/usr/bin/gdb", arguments: ["--version"])
    let host = LaunchReport.Host(kernel: "benchmark", cpu: "benchmark", cores: 2, libc: "glibc 2.36")
    let mode = LaunchReport.Mode(runs: runCount)
    let directory = "/tmp/launchprof-bench-\(getpid())"
    mkdir(directory, 0o700)

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, .writeBytesLogical],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 20,
        thresholds: [
            .mallocCountTotal: .init(relative: [.p90: 2], absolute: [.p90: 2_000]),
            .writeBytesLogical: .init(relative: [.p90: 2], absolute: [.p90: 100_000]),
        ])

    Benchmark("report-\(runCount)-runs-timelines-and-json-file") { benchmark in
        guard runs.count == runCount else { throw LaunchReportError.writerClosed(path: "synthetic runs") }
        for _ in benchmark.scaledIterations {
            let writer = try LaunchReportWriter(
                path: "\(directory)/report.json", target: target, host: host, mode: mode)
            var summary = LaunchSummaryBuilder()
            for (index, events) in inputs.enumerated() {
                let timeline = try PhaseTimeline(events: events)
                let run = LaunchRun(index: index, pid: Int32(1000 + index), timeline: timeline)
                try writer.append(run)
                summary.add(run)
            }
            try writer.finish(summary: summary.summary)
        }
    }

    Benchmark("report-\(runCount)-runs-json-file-only") { benchmark in
        for _ in benchmark.scaledIterations {
            let writer = try LaunchReportWriter(
                path: "\(directory)/report.json", target: target, host: host, mode: mode)
            var summary = LaunchSummaryBuilder()
            for run in runs {
                try writer.append(run)
                summary.add(run)
            }
            try writer.finish(summary: summary.summary)
        }
    }

    Benchmark("report-\(runCount)-runs-summary-statistics-only") { benchmark in
        for _ in benchmark.scaledIterations {
            var builder = LaunchSummaryBuilder()
            for run in runs { builder.add(run) }
            blackHole(builder.summary)
        }
    }
}
