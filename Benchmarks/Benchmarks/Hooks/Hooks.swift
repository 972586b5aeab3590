// The launch hooks' cost per call, timed by the program itself (`Programs/hook-loop.c`):
// attached (LAUNCHPROF_HOOK_FD names a datagram socketpair this benchmark drains, as launchprof
// does) and detached (the variable unset).
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

/// Drains the launchprof end of the socketpair on its own thread and counts the lines.
final class HookDrain: @unchecked Sendable {
    let ours: Int32
    let theirs: Int32
    private var thread = pthread_t()
    private(set) var lines = 0

    init() throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw BenchmarkError.systemCall(name: "socketpair", errno: errno)
        }
        ours = pair[0]
        theirs = pair[1]
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { context in
            let drain = Unmanaged<HookDrain>.fromOpaque(context!).takeRetainedValue()
            drain.loop()
            return nil
        }, context)
    }

    private func loop() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(ours, &buffer, buffer.count, 0)
            if count < 0 { if errno == EINTR { continue } else { return } }
            // "stop" (no newline) is our own end-of-run marker.
            if count == 4, buffer[0] == UInt8(ascii: "s") { return }
            lines += buffer[0..<count].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }
    }

    /// Stops the thread and returns the lines received.
    func finish() -> Int {
        _ = send(theirs, "stop", 4, 0)
        pthread_join(thread, nil)
        close(ours)
        close(theirs)
        return lines
    }
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

    // Back-to-back calls: the reader cannot keep up with a 10-datagram queue, so most sends are
    // refused (EAGAIN) — the cost of a burst.
    Benchmark("hook-call-attached-burst-\(attachedCalls)", configuration: .init(
        metrics: [attached, delivered], warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 10)
    ) { benchmark in
        try attachedRun(benchmark, calls: attachedCalls, paced: false)
    }

    // Batches of 8 with the queue drained in between (off the clock): every timed send is
    // delivered and wakes the reader — the cost of an app's few real calls.
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
