import LaunchprofReport
import Testing

@Suite("Report redaction")
struct ReportRedactionTests {
    @Test("two reports differing only in times, pids and directories redact to the same JSON")
    func redactionRemovesOnlyMeasurements() throws {
        var slow = try ReportSamples.report(runs: 2)
        var fast = LaunchReport(
            target: ReportSamples.target, host: ReportSamples.host, mode: ReportSamples.mode,
            runs: [try ReportSamples.run(5), try ReportSamples.run(7)].enumerated().map { offset, run in
                var copy = run
                copy.index = offset
                copy.pid = 99
                return copy
            })
        fast.target.path = "/elsewhere/app"
        slow.host.cores = 64
        #expect(try LaunchReportWriter.encode(slow) != (try LaunchReportWriter.encode(fast)))
        #expect(
            try LaunchReportWriter.encode(ReportRedaction.redacted(slow))
                == (try LaunchReportWriter.encode(ReportRedaction.redacted(fast))))
        // The structure survives: a missing phase still shows.
        fast.runs[0].phases.removeLast()
        #expect(
            try LaunchReportWriter.encode(ReportRedaction.redacted(slow))
                != (try LaunchReportWriter.encode(ReportRedaction.redacted(fast))))
    }
}
