// The launch hooks' cost per call, timed by the program itself (`Programs/hook-loop.c`):
// attached (LAUNCHPROF_HOOK_FD names a Unix stream socketpair this benchmark drains, as
// launchprof does) and detached (the variable unset).
import Benchmark
import BenchmarkSupport

#if canImport(Glibc)
import Glibc
#endif

/// The number `hook-loop` printed: "calls=N ns_per_call=X.XXX" → picoseconds per call.
func picosecondsPerCall(_ output: String, program: String) throws -> Int {
    guard let field = output.split(separator: " ").first(where: { $0.hasPrefix("ns_per_call=") }),
        let ns = Double(String(field.dropFirst("ns_per_call=".count).filter { !$0.isWhitespace }))
    else { throw BenchmarkError.badOutput(path: program, output: output) }
    return Int((ns * 1000).rounded())
}

let benchmarks: @Sendable () -> Void = {
    nonisolated(unsafe) var built: String?
    func program() throws -> String {
        if let built { return built }
        let path = try ProgramBuilder.build("hook-loop")
        built = path
        return path
    }
    let attachedCalls = 20_000
    let pacedCalls = 4_000
    let detachedCalls = 20_000_000
    let attached = BenchmarkMetric.custom("attached ps/call", useScalingFactor: false)
    let detached = BenchmarkMetric.custom("detached ps/call", useScalingFactor: false)
    let delivered = BenchmarkMetric.custom("attached lines delivered permille", polarity: .prefersLarger, useScalingFactor: false)

    Benchmark.defaultConfiguration = .init(
        warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10, thresholds: [:])

    /// One run of hook-loop with the socketpair attached; records ps/call and the share delivered.
    func attachedRun(_ benchmark: Benchmark, calls: Int, paced: Bool) throws {
        let path = try program()
        let drain = try HookDrain()
        var spawn = BareSpawn(
            path: path, arguments: [path, String(calls)] + (paced ? ["paced"] : []),
            environment: ChildEnvironment.strings(adding: ["LAUNCHPROF_HOOK_FD": "3"]))
        spawn.passing = (drain.theirs, 3)
        let output: String
        do { output = try spawn.output() } catch {
            _ = drain.finish()
            throw error
        }
        let lines = drain.finish()
        benchmark.measurement(attached, try picosecondsPerCall(output, program: path))
        // The warm-up call sends one line too.
        benchmark.measurement(delivered, lines * 1000 / (calls + 1))
    }

    // Back-to-back calls, the reader draining concurrently: the cost of a burst. The share of
    // lines delivered shows whether any send met a full socket buffer (and was dropped).
    Benchmark("hook-call-attached-burst-\(attachedCalls)", configuration: .init(
        metrics: [attached, delivered], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10)
    ) { benchmark in
        try attachedRun(benchmark, calls: attachedCalls, paced: false)
    }

    // Batches of 8 with the socket drained in between (off the clock): every timed send finds an
    // idle reader to wake — the cost of an app's few, spread-out calls.
    Benchmark("hook-call-attached-delivered-\(pacedCalls)", configuration: .init(
        metrics: [attached, delivered], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10)
    ) { benchmark in
        try attachedRun(benchmark, calls: pacedCalls, paced: true)
    }

    Benchmark("hook-call-detached-\(detachedCalls)", configuration: .init(
        metrics: [detached], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10)
    ) { benchmark in
        let path = try program()
        let spawn = BareSpawn(path: path, arguments: [path, String(detachedCalls)])
        benchmark.measurement(detached, try picosecondsPerCall(try spawn.output(), program: path))
    }
}
