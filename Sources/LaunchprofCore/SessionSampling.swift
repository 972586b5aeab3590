import CLaunchprof
import LaunchprofAnalysis
import LaunchprofReport
import LaunchprofSampling
import LaunchprofTracing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What `--sample` keeps across a session's runs: the symbolizer (objects are read once) and the
/// thread that drains the perf buffer while a launch runs.
final class SessionSampling: @unchecked Sendable {
    let configuration: SamplingConfiguration
    let symbolizer = StackSymbolizer()
    private let drainThread = JobThread()
    /// Used only by the tracer's thread, between launches.
    private var timelineBuilder: SampleTimelineBuilder?
    private var libunwindBuilder: SampleTimelineBuilder?
    /// With `compareWithLibunwind`: stacks unwound, and how many libunwind alone unwound to the
    /// same frames.
    private(set) var comparison = (stacks: 0, identical: 0)

    init(configuration: SamplingConfiguration) {
        self.configuration = configuration
        LaunchSampler.prepare()
    }

    deinit { drainThread.stop() }

    /// One launch's sampler; `attach` it to the trace request before tracing.
    final class Launch: Sendable {
        let sampler: LaunchSampler
        private let started = Atomic<Bool>(false)
        private let drainThread: JobThread
        private let opened = OneShotSignal()
        private let running = OneShotSignal()

        fileprivate init(sampler: LaunchSampler, drainThread: JobThread) {
            self.sampler = sampler
            self.drainThread = drainThread
        }

        /// Opens the events on the drain thread while the kernel finishes the child's exec (the
        /// tracer and the child share a CPU; this thread is free to run on another), holds the
        /// child at its exec stop until they are open, then drains them.
        func attach(to request: inout TraceRequest) {
            request.onSpawn = { [self] pid in
                started.store(true, ordering: .releasing)
                drainThread.start { [self] in
                    sampler.start(pid: pid)
                    opened.raise()
                    running.wait()
                    sampler.readInitialMappings()
                    sampler.collect()
                }
            }
            request.beforeFirstInstruction = { [self] in
                opened.wait()
                running.raise()
            }
        }

        /// Stops draining (the child has ended) and returns what was captured.
        func finish() -> LaunchSampler.Capture? {
            guard started.load(ordering: .acquiring) else { return nil }
            sampler.stop()
            running.raise()  // in case the child ended before its first instruction
            drainThread.waitForJob()
            return sampler.finish()
        }
    }

    func launch() throws(RunError) -> Launch {
        // Before the first launch, not at its first stack: a run without its samples is no run.
        if let missing = lp_unwind_library_missing() { throw .unwinderMissing(missing: String(cString: missing)) }
        let options = LaunchSampler.Options(
            rateHz: configuration.rateHz, allThreads: configuration.allThreads,
            stackBytes: configuration.stackBytes)
        do throws(SamplingError) {
            return Launch(sampler: try LaunchSampler(options: options), drainThread: drainThread)
        } catch {
            throw error.runError
        }
    }

    /// Adds the samples' flags, trees and summary to `run` and returns its folded stacks;
    /// `heldFrozen` (CLOCK_MONOTONIC ns) is a prewarmed launch's hold, which is no work of the
    /// program's.
    func annotate(
        _ run: inout LaunchRun, capture: LaunchSampler.Capture?, sampler: LaunchSampler, spawnNs: UInt64,
        heldFrozen: Range<UInt64>? = nil
    ) throws(RunError) -> [String: Int] {
        if let failure = sampler.failure { throw failure.runError }
        guard let capture else { return [:] }
        if timelineBuilder == nil { timelineBuilder = SampleTimelineBuilder(symbolizer: symbolizer) }
        guard let builder = timelineBuilder else { throw RunError.system(operation: "creating libunwind's address space for --sample", errno: ENOMEM) }
        let (spans, lost) = builder.spans(capture, originNs: spawnNs)
        if configuration.compareWithLibunwind {
            if libunwindBuilder == nil { libunwindBuilder = SampleTimelineBuilder(symbolizer: symbolizer, libunwindOnly: true) }
            if let reference = libunwindBuilder?.spans(capture, originNs: spawnNs).spans, reference.count == spans.count {
                comparison.stacks += spans.count
                comparison.identical += zip(spans, reference).filter { $0.frames.map(\.address) == $1.frames.map(\.address) }.count
            }
        }
        let analyzer = LaunchSampleAnalyzer(
            rateHz: configuration.rateHz, flagThresholdNs: configuration.flagThresholdNs, mainThread: capture.pid)
        let readyNs = run.metrics.timeToFirstFrameNs ?? run.metrics.exitNs ?? spans.map(\.endNs).max() ?? 0
        let frozen = heldFrozen.map { ($0.lowerBound &- min($0.lowerBound, spawnNs))..<($0.upperBound &- min($0.upperBound, spawnNs)) }
        let result = analyzer.analyse(spans: spans, phases: run.phases, readyNs: readyNs, lostRecords: lost, frozen: frozen)
        run.flags = result.flags
        run.callStackTree = result.callStackTree
        run.sampling = result.sampling
        run.sampling?.unwoundSamples = builder.unwoundSamples
        run.sampling?.unwoundFrames = builder.unwoundFrames
        run.sampling?.unwindNs = builder.unwindNs
        return result.folded
    }
}

extension SamplingError {
    var runError: RunError {
        switch self {
        case .system(let operation, let code): .system(operation: operation, errno: code)
        case .cannotOpenEvents: .sampling(self)
        }
    }
}
