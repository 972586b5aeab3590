import LaunchprofRenderers
import LaunchprofReport
import Synchronization

/// What `/metrics` serves: launches counted by program, start type and outcome since the monitor
/// started, histograms of cold launches' time to first frame and to `main` per program, the
/// events lost and the launches in flight. Updated by the monitor's loop, read by the endpoint's
/// thread; a scrape renders it in the format its `Accept` header asks for.
public final class FieldMetrics: Sendable {
    /// Upper bounds of the histograms' buckets, in seconds (`+Inf` is added): from a 1 ms
    /// command-line start to a 10 s desktop application's.
    public static let firstFrameBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    public static let mainBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    struct Histogram {
        var bounds: [Double]
        var counts: [UInt64]
        var count: UInt64 = 0
        var sumNs: UInt64 = 0

        init(bounds: [Double]) {
            self.bounds = bounds
            counts = Array(repeating: 0, count: bounds.count)
        }

        mutating func add(_ ns: UInt64) {
            let seconds = Double(ns) / 1e9
            for (index, bound) in bounds.enumerated() where seconds <= bound { counts[index] += 1 }
            count += 1
            sumNs &+= ns
        }
    }

    struct LaunchKey: Hashable, Comparable {
        var program: String
        var startType: String
        var outcome: String

        static func < (a: LaunchKey, b: LaunchKey) -> Bool {
            (a.program, a.startType, a.outcome) < (b.program, b.startType, b.outcome)
        }
    }

    struct State {
        var launches: [LaunchKey: UInt64] = [:]
        var firstFrame: [String: Histogram] = [:]
        var main: [String: Histogram] = [:]
        var lost: [String: UInt64] = [:]
        var inFlight = 0
        /// `--all`: unwatched execs by program label and outcome, and their time to the marker.
        var execs: [ExecKey: UInt64] = [:]
        var execMain: [String: Histogram] = [:]
        var execLabels: Set<String> = []
    }

    struct ExecKey: Hashable, Comparable {
        var program: String
        var outcome: String

        static func < (a: ExecKey, b: ExecKey) -> Bool { (a.program, a.outcome) < (b.program, b.outcome) }
    }

    /// `--all`: how many unwatched programs get a `program` label of their own — the first seen
    /// since the monitor started; every later one is counted under `program="other"`. First come
    /// rather than the most frequent, so that a series never moves (a counter never goes down).
    public static let labelledExecPrograms = 20
    public static let otherPrograms = "other"

    private let state = Mutex(State())
    /// Programs watched: each has its series from the start, at zero.
    private let programs: [String]
    /// `--all`'s marker: its families are served only then.
    private let execMarker: ExecCensus.Marker?

    public init(programs: [String], execMarker: ExecCensus.Marker? = nil) {
        self.programs = programs
        self.execMarker = execMarker
        state.withLock { state in
            for program in programs {
                state.firstFrame[program] = Histogram(bounds: Self.firstFrameBuckets)
                state.main[program] = Histogram(bounds: Self.mainBuckets)
            }
        }
    }

    /// Counts one recorded launch of `program`.
    public func record(program: String, run: LaunchRun) {
        let startType = run.field?.startType ?? .cold
        let outcome = run.resolvedOutcome.kind
        state.withLock { state in
            state.launches[LaunchKey(program: program, startType: startType.metricLabel, outcome: outcome.metricLabel), default: 0] += 1
            // Cold launches alone: a forked or resumed one did not pay for the process's start.
            guard startType == .cold else { return }
            if run.countsAsLaunch, let frame = run.metrics.timeToFirstFrameNs {
                state.firstFrame[program, default: Histogram(bounds: Self.firstFrameBuckets)].add(frame)
            }
            if let main = run.metrics.timeToMainNs {
                state.main[program, default: Histogram(bounds: Self.mainBuckets)].add(main)
            }
        }
    }

    /// Counts one unwatched exec (`--all`); times it from its spawn when its fork was seen.
    public func record(exec: LaunchStore.Exec) {
        let record = exec.record
        state.withLock { state in
            var program = record.program
            if !state.execLabels.contains(program) {
                if state.execLabels.count < Self.labelledExecPrograms {
                    state.execLabels.insert(program)
                } else {
                    program = Self.otherPrograms
                }
            }
            state.execs[ExecKey(program: program, outcome: record.outcome.rawValue), default: 0] += 1
            if let exec = record.execNs, let toMarker = record.toMarkerNs {
                state.execMain[program, default: Histogram(bounds: Self.mainBuckets)].add(exec + toMarker)
            }
        }
    }

    /// Adds to the events lost from `source`.
    public func lost(_ count: UInt64, source: String) {
        guard count > 0 else { return }
        state.withLock { $0.lost[source, default: 0] += count }
    }

    public func setInFlight(_ count: Int) {
        state.withLock { $0.inFlight = count }
    }

    /// The metric families now.
    public func exposition() -> MetricsExposition {
        let state = state.withLock { $0 }
        var families: [MetricFamily] = []
        families.append(MetricFamily(
            name: "launchprof_field_launches", type: .counter,
            help: "Launches recorded by launchprof monitor since it started, by program, start type and outcome.",
            samples: state.launches.keys.sorted().map { key in
                MetricSample(
                    suffix: "_total",
                    labels: [("program", key.program), ("start_type", key.startType), ("outcome", key.outcome)],
                    value: String(state.launches[key] ?? 0))
            }))
        families.append(histogramFamily(
            "launchprof_field_time_to_first_frame_seconds",
            help: "Cold launches' time from the spawn to the first frame (hook, window or clean exit), seconds.",
            state.firstFrame))
        families.append(histogramFamily(
            "launchprof_field_time_to_main_seconds", help: "Cold launches' time from the spawn to main, seconds.",
            state.main))
        if let marker = execMarker {
            families.append(MetricFamily(
                name: "launchprof_field_unwatched_execs", type: .counter,
                help: "launchprof monitor --all: execs of programs not watched since it started, by program (the first \(Self.labelledExecPrograms) seen; later ones under other) and outcome (reached: the marker was hit).",
                samples: state.execs.keys.sorted().map { key in
                    MetricSample(suffix: "_total", labels: [("program", key.program), ("outcome", key.outcome)], value: String(state.execs[key] ?? 0))
                }))
            if marker != .unprobed { families.append(histogramFamily(
                "launchprof_field_unwatched_time_to_main_seconds",
                help: "launchprof monitor --all: unwatched execs' time from the spawn to \(marker.meaning), seconds; execs whose fork was not seen are counted, not timed.",
                state.execMain, extraLabels: [("marker", marker.rawValue)])) }
        }
        families.append(MetricFamily(
            name: "launchprof_field_events_lost", type: .counter,
            help: "Kernel events launchprof monitor could not use, by source (kernel: samples its rings had no room for).",
            samples: state.lost.keys.sorted().map { MetricSample(suffix: "_total", labels: [("source", $0)], value: String(state.lost[$0] ?? 0)) }))
        families.append(MetricFamily(
            name: "launchprof_field_launches_in_flight", type: .gauge,
            help: "Launches of watched programs begun and not yet ended.",
            samples: [MetricSample(labels: [], value: String(state.inFlight))]))
        return MetricsExposition(families: families)
    }

    private func histogramFamily(
        _ name: String, help: String, _ histograms: [String: Histogram], extraLabels: [(name: String, value: String)] = []
    ) -> MetricFamily {
        var samples: [MetricSample] = []
        for key in histograms.keys.sorted() {
            guard let histogram = histograms[key] else { continue }
            let program: [(name: String, value: String)] = [("program", key)] + extraLabels
            for (index, bound) in histogram.bounds.enumerated() {
                samples.append(MetricSample(
                    suffix: "_bucket", labels: program + [("le", Self.boundText(bound))],
                    value: String(histogram.counts[index])))
            }
            samples.append(MetricSample(suffix: "_bucket", labels: program + [("le", "+Inf")], value: String(histogram.count)))
            samples.append(MetricSample(suffix: "_count", labels: program, value: String(histogram.count)))
            samples.append(MetricSample(suffix: "_sum", labels: program, value: MetricsExposition.seconds(histogram.sumNs)))
        }
        return MetricFamily(name: name, type: .histogram, unit: "seconds", help: help, samples: samples)
    }

    /// A bucket bound as both formats read it ("0.005", "1.0").
    static func boundText(_ bound: Double) -> String {
        var text = String(bound)
        if !text.contains(".") && !text.contains("e") { text += ".0" }
        return text
    }
}
