// inspect of a large closure (gdb's) — in-process and through the CLI — versus the loader's own
// `ldd` on the same program.
import Benchmark
import BenchmarkSupport
import LaunchprofCore

#if canImport(Glibc)
import Glibc
#endif

let program = "/usr/bin/gdb"

/// One spawn of `command`, output discarded; returns the wall time in ns.
func timed(_ command: [String]) throws -> UInt64 {
    let start = monotonicNs()
    let status = try BareSpawn(path: command[0], arguments: command).run()
    let elapsed = monotonicNs() - start
    guard status == 0 else { throw BenchmarkError.childFailed(path: command.joined(separator: " "), status: status) }
    return elapsed
}

func launchprofCommand() throws -> [String] {
    guard let binary = ProgramBuilder.launchprofBinary() else {
        throw BenchmarkError.missingTool(
            name: "launchprof",
            hint: "build it first: swift build -c release --static-swift-stdlib --product launchprof "
                + "--scratch-path .build-bench (in the checkout's root), or set LAUNCHPROF_BIN")
    }
    return [binary, "inspect", "--json", program]
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .milliseconds,
        warmupIterations: 2,
        maxDuration: .seconds(10),
        maxIterations: 30,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 5], absolute: [.p90: 500])])

    Benchmark("inspect-gdb-in-process") { benchmark in
        let configuration = InspectConfiguration(program: program, environment: ChildEnvironment.dictionary())
        for _ in benchmark.scaledIterations {
            blackHole(try InspectSession(configuration: configuration).run())
        }
    }

    Benchmark("ldd-gdb") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try timed(["/usr/bin/ldd", program])) }
    }

    Benchmark("inspect-gdb-cli") { benchmark in
        let command = try launchprofCommand()
        for _ in benchmark.scaledIterations { blackHole(try timed(command)) }
    }

    // The figure: CLI inspect over ldd, ratio of medians of interleaved pairs.
    let pairs = 10
    let ratio = BenchmarkMetric.custom("inspect over ldd permille", useScalingFactor: false)
    let lddMedian = BenchmarkMetric.custom("ldd median us", useScalingFactor: false)
    let inspectMedian = BenchmarkMetric.custom("inspect CLI median us", useScalingFactor: false)
    Benchmark(
        "inspect-cli-over-ldd-\(pairs)-pairs",
        configuration: .init(
            metrics: [ratio, lddMedian, inspectMedian], warmupIterations: 1, maxDuration: .seconds(30),
            maxIterations: 5, thresholds: [:])
    ) { benchmark in
        let command = try launchprofCommand()
        var ldd: [UInt64] = []
        var inspect: [UInt64] = []
        for _ in 0..<pairs {
            ldd.append(try timed(["/usr/bin/ldd", program]))
            inspect.append(try timed(command))
        }
        benchmark.measurement(ratio, perMille(median(inspect), median(ldd)))
        benchmark.measurement(lddMedian, Int(median(ldd) / 1000))
        benchmark.measurement(inspectMedian, Int(median(inspect) / 1000))
    }
}
