// Tracer overhead: a profiled launch of a libc-only program (every boundary observed) versus
// the bare posix_spawn + waitpid of the same program with the same environment, pinned and not.
import Benchmark
import BenchmarkSupport
import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// Launches per benchmark iteration: each iteration starts one thread (the tracer needs its
/// own); a batch keeps that thread's cost out of the per-launch figure, for both sides alike.
let batch = 10

let benchmarks: @Sendable () -> Void = {
    // One subject for all benchmarks: built and planned once, before any timing.
    nonisolated(unsafe) var prepared: LaunchSubject?
    func subject() throws -> LaunchSubject {
        if let prepared { return prepared }
        let made = try LaunchSubject()
        prepared = made
        return made
    }
    let cpu = DedicatedThread<Int>.currentCPU

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 30,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 10], absolute: [.p90: 200])])

    Benchmark("bare-posix-spawn-x\(batch)") { benchmark in
        let subject = try subject()
        for _ in benchmark.scaledIterations {
            _ = try LaunchSubject.onTracerThread(pinnedCPU: nil) {
                for _ in 0..<batch { _ = try subject.launchBare() }
            }
        }
    }

    Benchmark("traced-pinned-x\(batch)") { benchmark in
        let subject = try subject()
        for _ in benchmark.scaledIterations {
            _ = try LaunchSubject.onTracerThread(pinnedCPU: cpu) {
                for _ in 0..<batch { _ = try subject.launchTraced(pinnedCPU: cpu) }
            }
        }
    }

    Benchmark("traced-unpinned-x\(batch)") { benchmark in
        let subject = try subject()
        for _ in benchmark.scaledIterations {
            _ = try LaunchSubject.onTracerThread(pinnedCPU: nil) {
                for _ in 0..<batch { _ = try subject.launchTraced(pinnedCPU: nil) }
            }
        }
    }

    // The figure: ratio of medians, each traced launch right after a bare one so both see
    // the same machine load. Pinned pairs run on a pinned thread, unpinned pairs on a free one,
    // alternating in rounds. Integer metrics: ratios in per-mille, times in ns. The 15-pair
    // version is the CI smoke's; the 200-pair one gives the figure over 200 launches of each kind.
    overheadRatioBenchmark(rounds: 3, pairsPerRound: 5, maxIterations: 10, subject: subject, cpu: cpu)
    overheadRatioBenchmark(rounds: 10, pairsPerRound: 20, maxIterations: 3, subject: subject, cpu: cpu)
}

private func overheadRatioBenchmark(
    rounds: Int, pairsPerRound: Int, maxIterations: Int, subject: @escaping () throws -> LaunchSubject, cpu: Int32
) {
    let pinnedRatio = BenchmarkMetric.custom("ratio pinned permille", useScalingFactor: false)
    let unpinnedRatio = BenchmarkMetric.custom("ratio unpinned permille", useScalingFactor: false)
    let defaultRatio = BenchmarkMetric.custom("ratio default permille", useScalingFactor: false)
    let bareMedian = BenchmarkMetric.custom("bare median ns", useScalingFactor: false)
    let pinnedMedian = BenchmarkMetric.custom("traced pinned median ns", useScalingFactor: false)
    let unpinnedMedian = BenchmarkMetric.custom("traced unpinned median ns", useScalingFactor: false)
    let eventCount = BenchmarkMetric.custom("events per traced launch", useScalingFactor: false)
    Benchmark(
        "overhead-ratio-\(rounds * pairsPerRound)-pairs",
        configuration: .init(
            metrics: [pinnedRatio, unpinnedRatio, defaultRatio, bareMedian, pinnedMedian, unpinnedMedian, eventCount],
            warmupIterations: 1, maxDuration: .seconds(60), maxIterations: maxIterations,
            thresholds: [eventCount: .init(relative: [.p90: 0], absolute: [.p90: 0])])
    ) { benchmark in
        let subject = try subject()
        var barePinned: [UInt64] = []
        var bareFree: [UInt64] = []
        var pinned: [UInt64] = []
        var unpinned: [UInt64] = []
        var events = 0
        for _ in 0..<rounds {
            let round = try LaunchSubject.onTracerThread(pinnedCPU: cpu) {
                try (0..<pairsPerRound).map { _ in (try subject.launchBare(), try subject.launchTraced(pinnedCPU: cpu)) }
            }
            barePinned += round.map(\.0)
            pinned += round.map { $0.1.ns }
            events = round.last?.1.events.count ?? 0
            let free = try LaunchSubject.onTracerThread(pinnedCPU: nil) {
                try (0..<pairsPerRound).map { _ in (try subject.launchBare(), try subject.launchTraced(pinnedCPU: nil)) }
            }
            bareFree += free.map(\.0)
            unpinned += free.map { $0.1.ns }
        }
        benchmark.measurement(pinnedRatio, perMille(median(pinned), median(barePinned)))
        benchmark.measurement(unpinnedRatio, perMille(median(unpinned), median(bareFree)))
        // launchprof's default (pinned until main) against a bare spawn as a shell or hyperfine
        // makes it, from a launcher no one pinned.
        benchmark.measurement(defaultRatio, perMille(median(pinned), median(bareFree)))
        benchmark.measurement(bareMedian, Int(median(barePinned + bareFree)))
        benchmark.measurement(pinnedMedian, Int(median(pinned)))
        benchmark.measurement(unpinnedMedian, Int(median(unpinned)))
        benchmark.measurement(eventCount, events)
    }
}
