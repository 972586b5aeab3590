import Foundation
@testable import LaunchprofReport
import Testing

/// A run as the report writer encodes it (one line of the report) reads back as the same run.
@Suite("LaunchRun JSON")
struct LaunchRunJSONTests {
    /// `run` through the writer's encoding and back.
    static func roundTrip(_ run: LaunchRun) throws -> LaunchRun {
        let bytes = try LaunchReportWriter.encodeValue(run)
        #expect(!bytes.contains(UInt8(ascii: "\n")), "one run, one line")
        return try JSONDecoder().decode(LaunchRun.self, from: Data(bytes))
    }

    @Test("scripted runs read back as written")
    func scripted() throws {
        for index in 0..<3 {
            let run = try ReportSamples.run(index)
            #expect(try Self.roundTrip(run) == run)
        }
    }

    @Test("every optional, every escape, every exit shape reads back as written")
    func awkward() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let awkward = "a/b \"quoted\" back\\slash \(controls) é 日本 🚀 \u{7F}"
        let exits: [RunExit?] = [
            nil, RunExit(code: 0), RunExit(code: -1), RunExit(signal: 11, coreDumped: true),
            RunExit(signal: 9, killedBy: "timeout \(awkward)"),
        ]
        for (offset, exit) in exits.enumerated() {
            var run = LaunchRun(
                index: offset, pid: Int32.max, exitStatus: exit,
                phases: [
                    LaunchPhase(name: awkward, startNs: UInt64.max, durationNs: 0),
                    LaunchPhase(name: "loader.init", startNs: 1, durationNs: 2, object: "/lib/\(awkward).so", image: 3),
                    LaunchPhase(name: "extendedLaunch", startNs: 1, durationNs: 2, task: awkward),
                ],
                metrics: offset % 2 == 0
                    ? LaunchMetrics()
                    : LaunchMetrics(
                        timeToMainNs: 1, timeToFirstFrameNs: 2, extendedLaunchNs: 3, exitNs: 4,
                        optimizedTimeToFirstFrameNs: 5, resumeTimeNs: 6),
                absent: [AbsentPhase(phase: "main", reason: awkward), AbsentPhase(phase: "x", reason: "y", image: 2)],
                warnings: TimelineWarning.Code.allCases.map { TimelineWarning($0, awkward) },
                timedOut: offset == 3, residentBeforeBytes: offset == 1 ? 12_345 : nil,
                closureBytes: offset == 1 ? 99_999 : nil)
            if offset == 2 {
                let leaf = CallStackTree.Frame(
                    binaryName: awkward, buildID: "ab12", address: 0x401000,
                    offsetIntoBinaryTextSegment: 0x1000, sampleCount: 3, symbol: awkward)
                run.callStackTree = CallStackTree(callStacks: [
                    .init(threadAttributed: true, callStackRootFrames: [
                        .init(
                            binaryName: "app", buildID: "", address: 1, offsetIntoBinaryTextSegment: 1,
                            sampleCount: 4, subFrames: [leaf])
                    ])
                ])
                run.flags = [
                    LaunchFlag(
                        kind: .blocked, phase: awkward, function: "f", object: "o", durationNs: 7,
                        syscall: "poll", startNs: 8, advice: awkward),
                    LaunchFlag(kind: .cpu, phase: "p", function: "g", object: "o", durationNs: 9, advice: "a"),
                ]
            }
            // launchprof's own cost per phase, on some phases only.
            if offset % 2 == 1 { run.phases[1].observerNs = UInt64(offset) * 1_234 }
            // Thread states, on some runs.
            if offset % 2 == 0 {
                run.phases[1].threadState = ThreadStateBreakdown(runningNs: 1, diskIONs: 1)
                run.threadStates = ReportSchemaTests.threadStates
            }
            // Every outcome shape, its free text awkward too.
            run.outcome = [
                nil, .completed, RunOutcome(kind: .exitedEarly, exitCode: -1, beforeReadiness: true),
                RunOutcome(kind: .crashed, signal: "SIGSEGV", signalNumber: 11),
                .timedOut(after: UInt64.max, waitingFor: awkward),
            ][offset]
            if offset == 0 { run.outcome = RunOutcome(kind: .failedToStart, reason: awkward) }
            #expect(try Self.roundTrip(run) == run)
        }
    }
}
