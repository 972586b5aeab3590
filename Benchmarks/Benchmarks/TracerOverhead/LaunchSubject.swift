import BenchmarkSupport
import LaunchprofELF
import LaunchprofReport
import LaunchprofSystem
import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// The libc-only program, ready to launch bare or under the tracer with a full plan (loader
/// relocation start and end, every library's initializers, entry, main, exit).
final class LaunchSubject: @unchecked Sendable {
    let path: String
    let environment: [String]
    let plan: ImagePlan
    /// Both kinds of child write to /dev/null, so neither pays for a terminal.
    let devNull: Int32
    /// Shared by every traced launch, as in `launchprof run`: after the first launch the tracer
    /// knows where the initializers are and skips a stop.
    let learned = LearnedLayout()

    init() throws {
        path = try ProgramBuilder.build("libc-only")
        environment = ChildEnvironment.strings()
        let image = try ELFImage.read(path: path)
        let closure = DependencyResolver.system().resolve(
            program: image, environment: ChildEnvironment.dictionary())
        var plan = ImagePlanner.plan(program: image, closure: closure)
        // The boundaries before main are what is compared: no runtime probes, whose phases the
        // ptrace observer reports unobserved.
        plan.runtime = RuntimeProbePlan()
        self.plan = plan
        if !plan.unobservable.isEmpty {
            let phases = plan.unobservable.map { "\($0.phase) (\($0.reason))" }.joined(separator: ", ")
            throw BenchmarkError.badOutput(path: path, output: "the plan cannot observe: \(phases)")
        }
        devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard devNull >= 0 else { throw BenchmarkError.systemCall(name: "open(/dev/null)", errno: errno) }
    }

    deinit { close(devNull) }

    /// posix_spawn + waitpid; returns the wall time in ns.
    func launchBare() throws -> UInt64 {
        var spawn = BareSpawn(path: path, arguments: [path], environment: environment)
        spawn.standardOutput = devNull
        let start = monotonicNs()
        let status = try spawn.run()
        let elapsed = monotonicNs() - start
        guard status == 0 else { throw BenchmarkError.childFailed(path: path, status: status) }
        return elapsed
    }

    /// A traced launch, same environment; returns the wall time in ns and the events seen.
    /// Must run on the tracer's thread.
    func launchTraced(pinnedCPU: Int32?) throws -> (ns: UInt64, events: [LaunchEvent]) {
        var request = TraceRequest(executable: path, arguments: [path], environment: environment, plan: plan)
        request.standardInput = devNull
        request.standardOutput = devNull
        request.standardError = devNull
        request.pinnedCPU = pinnedCPU
        let tracer = LaunchTracer(learned: learned)
        let start = monotonicNs()
        let result = try tracer.trace(request, planForImage: { [plan] _ in plan }, control: TraceControl())
        let elapsed = monotonicNs() - start
        guard result.exitStatus == .exited(code: 0) else {
            throw BenchmarkError.badOutput(path: path, output: "traced run ended with \(result.exitStatus)")
        }
        try Self.checkEveryBoundary(result.events, path: path)
        return (elapsed, result.events)
    }

    /// A profiled launch must observe every boundary the tracer offers, or the comparison is not
    /// the one asked for. The boundary between libc's start-up and the program's initializers is
    /// the entry point, or — when the program has an initializer — that initializer's first call
    /// (the tracer then skips the entry stop).
    static func checkEveryBoundary(_ events: [LaunchEvent], path: String) throws {
        var seen: Set<String> = []
        for event in events {
            switch event {
            case .relocationStarted: seen.insert("relocationStarted")
            case .relocationFinished: seen.insert("relocationFinished")
            case .objectInitStarted: seen.insert("objectInitStarted")
            case .entryReached, .programInitStarted: seen.insert("entryOrProgramInit")
            case .mainReached: seen.insert("mainReached")
            case .exited: seen.insert("exited")
            case .unobservable(let phase, let reason):
                throw BenchmarkError.badOutput(path: path, output: "unobservable \(phase): \(reason)")
            default: break
            }
        }
        let expected: Set<String> = [
            "relocationStarted", "relocationFinished", "objectInitStarted", "entryOrProgramInit", "mainReached",
            "exited",
        ]
        guard seen == expected else {
            throw BenchmarkError.badOutput(
                path: path, output: "missing boundaries: \(expected.subtracting(seen).sorted())")
        }
    }

    /// Runs `body` on a dedicated (optionally pinned) thread, as the tracer requires.
    static func onTracerThread<T: Sendable>(
        pinnedCPU: Int32?, _ body: @escaping @Sendable () throws -> T
    ) throws -> T {
        let thread = DedicatedThread(pinnedCPU: pinnedCPU) { () -> Result<T, any Error> in
            Result { try body() }
        }
        return try thread.join().get()
    }
}
