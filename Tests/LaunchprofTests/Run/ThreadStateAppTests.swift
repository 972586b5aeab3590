import Foundation
import LaunchprofCore
import LaunchprofReport
import Testing

/// Thread states of real programs: xterm on a real X server (Xvfb, started by the test, so its
/// pid is known) and Python importing a package. What each waited for must be named for what it
/// was, and the reasons must add up.
@Suite("thread states: real programs' waits and reasons", .serialized)
struct ThreadStateAppTests {
    /// Every run's states add up: the launch's to the launch, each phase's to the phase; the
    /// wakers of each state hold no more than that state's time; and the reasons, each a
    /// different part of the launch (a state, or the sleeps one waker ended), no more than it.
    static func expectAddingUp(_ run: LaunchRun, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let states = try #require(run.threadStates, "no thread states: \(run.warnings.map(\.message))", sourceLocation: sourceLocation)
        #expect(states.launch.totalNs == states.launchEndNs, "launch \(states.launch) for \(states.launchEndNs) ns", sourceLocation: sourceLocation)
        for phase in run.phases where phase.durationNs > 0 {
            let split = try #require(phase.threadState, "\(phase.name) has no states", sourceLocation: sourceLocation)
            #expect(split.totalNs == phase.durationNs, "\(phase.name): \(split) for \(phase.durationNs) ns", sourceLocation: sourceLocation)
        }
        for state in ThreadState.allCases {
            let woken = states.wakers.filter { $0.state == state }.reduce(0) { $0 + $1.ns }
            #expect(woken <= states.launch[state], "\(state): wakers hold \(woken) ns of \(states.launch[state])", sourceLocation: sourceLocation)
        }
        let reasons = states.reasons.reduce(0) { $0 + $1.ns }
        #expect(reasons <= states.launch.totalNs, "reasons \(states.reasons.map(\.message)) exceed the launch", sourceLocation: sourceLocation)
        #expect(states.reasons.map(\.ns) == states.reasons.map(\.ns).sorted(by: >), "ranked by time", sourceLocation: sourceLocation)
    }

    /// xterm waits for the X server at every synchronous request: the waker of those sleeps is
    /// the Xvfb this test started, by pid.
    @Test func xtermsWaitsForTheXServerNameXvfb() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let outcome = try RunHarness.run("/usr/bin/xterm", ["-e", "true"], runs: 2, environment: ["DISPLAY": server.display]) {
            $0.readiness = .frame
            $0.timeoutNs = 20_000_000_000
        }
        #expect(outcome.runs.count == 2)
        for run in outcome.runs {
            #expect(run.outcome?.kind == .completed, "\(String(describing: run.outcome))")
            try Self.expectAddingUp(run)
            let states = try #require(run.threadStates)
            let x = try #require(
                states.wakers.first { $0.kind == .thread && $0.task?.pid == server.pid },
                "no waker is Xvfb (pid \(server.pid)): \(states.wakers.map { "\($0.task?.text ?? "\($0.kind)") \($0.ns) ns" })")
            #expect(x.state == .sleeping && x.count >= 2, "\(x.task?.text ?? ""): \(x.count) wake-ups from \(x.state)")
            #expect(x.task?.process == "Xvfb", "\(String(describing: x.task))")
            if let reason = states.reasons.first(where: { $0.code == .displayServer }) {
                #expect(reason.message.contains("Xvfb"), "\(reason.message)")
            }
        }
    }

    /// `python3 -c 'import email.mime.text'`: its waits are named (a reader of .pyc files,
    /// timers, interrupts — none unseen for long) and its reasons add up.
    @Test func pythonImportsReasonsAddUp() throws {
        let outcome = try RunHarness.run("/usr/bin/python3", ["-c", "import email.mime.text"], runs: 3)
        #expect(outcome.runs.count == 3)
        for run in outcome.runs {
            #expect(run.outcome?.kind == .completed, "\(String(describing: run.outcome))")
            try Self.expectAddingUp(run)
            let states = try #require(run.threadStates)
            #expect(states.launch.runningNs > 0 && states.timeline.first?.startNs == 0)
            // The timeline covers the launch without a hole, each wait with what ended it.
            for (span, next) in zip(states.timeline, states.timeline.dropFirst()) {
                #expect(span.endNs == next.startNs, "a hole between \(span) and \(next)")
            }
            #expect((states.timeline.last?.endNs ?? 0) >= states.launchEndNs)
        }
    }
}
