import LaunchprofReport
import LaunchprofRenderers
import LaunchprofTracing
import Testing

@testable import LaunchprofCore

/// A run whose scheduler records the kernel dropped has no thread states — any lost record may
/// be one of the main thread's switches — with the loss counted, not figures beside a caveat.
@Suite("thread states: a run whose scheduler records were dropped")
struct ThreadStatesLossTests {
    @Test("no states, the records lost counted in a warning; the text names the run and keeps the others' medians")
    func droppedRecords() throws {
        let session = SessionThreadStates(knownFiles: [])
        var whole = ExportSamples.run(index: 0, firstFrameMs: 14)
        session.annotate(&whole, capture: SchedulerCapture(), spawnNs: 1_000)
        #expect(whole.threadStates != nil, "a capture with nothing lost has states")

        var lossy = ExportSamples.run(index: 1, firstFrameMs: 14)
        var capture = SchedulerCapture()
        capture.lostRecords = 7
        session.annotate(&lossy, capture: capture, spawnNs: 1_000)
        #expect(lossy.threadStates == nil)
        #expect(lossy.phases.allSatisfy { $0.threadState == nil })
        let warning = try #require(lossy.warnings.first { $0.code == .threadStatesLost })
        #expect(warning.message.contains("dropped 7 scheduler record(s)"), "\(warning.message)")

        let report = ExportSamples.report([whole, lossy])
        #expect(report.summary.threadStates?.runs == 1)
        let text = try TextWaterfallRenderer().render(report)
        #expect(text.contains("median of 1 run)"), "\(text)")
        #expect(text.contains("no thread states in run 1: the kernel dropped scheduler records"), "\(text)")
        let onlyLossy = try TextWaterfallRenderer().render(ExportSamples.report([lossy]))
        #expect(onlyLossy.contains(warning.message))
    }
}
