import CLaunchprof
import Foundation
import LaunchprofCore
import LaunchprofReport
import Synchronization
import Testing

/// Runs `launchprof run` in-process (the real tracer on real children) and collects every run.
enum RunHarness {
    struct Outcome {
        var runs: [LaunchRun]
        var summary: LaunchSummary
    }

    /// A value unique to one test, put in the child's environment so the test can find every
    /// process the launch created in the process table afterwards.
    static func marker() -> String { "LP_TEST_MARKER=\(UUID().uuidString)" }

    static func run(
        _ program: String, _ arguments: [String] = [], runs: Int = 1,
        environment: [String: String] = [:], configure: (inout RunConfiguration) throws -> Void = { _ in }
    ) throws -> Outcome {
        var configuration = RunConfiguration(program: program, arguments: arguments)
        configuration.runs = runs
        configuration.inheritedEnvironment = ProcessInfo.processInfo.environment
        configuration.environment = environment
        try configure(&configuration)
        let session = try RunSession(configuration: configuration)
        let output = InMemoryReportOutput()
        let collected = RunCollector()
        let report = try LaunchPipeline(session, sinks: [StreamingReportSink(output: output), collected]).run()[0].get()
        // Every real run's report is checked against the published schema.
        try SchemaValidator.expectValid(output.bytes, against: .launchReport, "report of \(program)")
        return Outcome(runs: collected.runs, summary: report.summary)
    }

    /// Pids of live processes whose environment holds `marker` (`KEY=VALUE`).
    static func processes(withMarker marker: String) -> [Int32] {
        let needle = Array(marker.utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return data.split(separator: 0).contains { Array($0) == needle }
        }
    }

    /// Descriptors that become readable when each of `pids` ends (pidfds: they work for
    /// processes that are not this test's children). Close them with `awaitExit`.
    static func exitWatchers(_ pids: [Int32]) -> [Int32] {
        pids.compactMap { pid in
            var fd: Int32 = -1
            return lp_pidfd_open(pid, &fd) == 0 ? fd : nil
        }
    }

    /// Waits until every watched process has ended or `timeoutMs` has passed, and closes the
    /// descriptors.
    static func awaitExit(_ watchers: [Int32], timeoutMs: Int) {
        var pending = watchers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
        while !pending.isEmpty {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard poll(&pending, nfds_t(pending.count), left) > 0 else { break }
            pending.removeAll { $0.revents != 0 }
            for index in pending.indices { pending[index].revents = 0 }
        }
        watchers.forEach { close($0) }
    }

    /// The state letter of a process (`R`, `S`, `t` traced-stopped, `Z` zombie…), nil if gone.
    static func state(of pid: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(close, offsetBy: 2)...].first
    }

    /// max(0.5 ms, 3%) of the truth: the accuracy the tracer promises for every measured span.
    static func tolerance(_ truthNs: UInt64) -> UInt64 { max(500_000, truthNs * 3 / 100) }

    /// Compares spans measured over several runs with the truth of the same runs, by the median
    /// absolute error: one run whose stop the scheduler delayed (a loaded machine) does not
    /// decide, while a systematic error does.
    static func expectMedianClose(
        _ pairs: [(measured: UInt64?, truth: UInt64)], _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let errors = pairs.compactMap { pair -> (error: UInt64, truth: UInt64)? in
            guard let measured = pair.measured else { return nil }
            return (measured > pair.truth ? measured - pair.truth : pair.truth - measured, pair.truth)
        }.sorted { $0.error < $1.error }
        guard errors.count == pairs.count, !errors.isEmpty else {
            Issue.record("\(what): not measured in every run", sourceLocation: sourceLocation)
            return
        }
        let median = errors[errors.count / 2]
        #expect(
            median.error <= tolerance(median.truth),
            "\(what): median error \(median.error) ns over \(pairs.count) runs (truth \(median.truth) ns)",
            sourceLocation: sourceLocation)
    }

    static func expectClose(
        _ measured: UInt64?, _ truth: UInt64, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let measured else {
            Issue.record("\(what): not measured", sourceLocation: sourceLocation)
            return
        }
        let difference = measured > truth ? measured - truth : truth - measured
        #expect(
            difference <= tolerance(truth),
            "\(what): measured \(measured) ns, truth \(truth) ns", sourceLocation: sourceLocation)
    }
}

extension LaunchRun {
    func phase(_ name: String, object: String? = nil, task: String? = nil, image: Int? = nil) -> LaunchPhase? {
        phases.first {
            $0.name == name && (object == nil || $0.object?.hasSuffix(object!) == true)
                && (task == nil || $0.task == task) && $0.image == image
        }
    }
}
