import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// The readiness policy: one rule for "is this launch complete" (the run monitor, live) and
/// "where is its first frame" (the timeline, afterwards).
@Suite("readiness policy")
struct ReadinessPolicyTests {
    static let policies: [ReadinessPolicy] = [
        .automatic, .exit, .hook, .listen, .frame, try! .stdout("^up$"), try! .stderr("ready"),
    ]

    /// Every combination of what a launch can show before its exit, at distinct times.
    static var evidence: [ReadinessPolicy.Evidence] {
        var all: [ReadinessPolicy.Evidence] = []
        for mask in 0..<16 {
            for openTasks in [false, true] {
                all.append(ReadinessPolicy.Evidence(
                    hookFirstFrameNs: mask & 1 != 0 ? 30 : nil, readyNs: mask & 2 != 0 ? 20 : nil,
                    displayFrameNs: mask & 4 != 0 ? 10 : nil, cleanExitNs: mask & 8 != 0 ? 40 : nil,
                    openTasks: openTasks))
            }
        }
        return all
    }

    @Test("a launch the monitor ends as complete has the first frame the timeline then places", arguments: policies)
    func liveAndAfterwardsAgree(policy: ReadinessPolicy) {
        for evidence in Self.evidence where policy.isComplete(evidence) {
            let firstFrame = policy.firstFrame(evidence)
            #expect(firstFrame != nil, "\(policy): complete with \(evidence) but no first frame")
            #expect(firstFrame != evidence.cleanExitNs, "\(policy): complete before the exit, yet timed by it")
            #expect(!evidence.openTasks, "\(policy): complete with a task open")
        }
        // Under --ready exit the launch runs to its exit.
        #expect(Self.evidence.allSatisfy { !ReadinessPolicy.exit.isComplete($0) })
    }

    @Test("the timeline's first frame is the policy's, for events of every kind")
    func timelineUsesThePolicy() throws {
        let t0: UInt64 = 1_000_000_000
        let events: [LaunchEvent] = [
            .spawned(atNs: t0), .imageStarted(image: 0, path: "/app", atNs: t0 + 100),
            .display(DisplayEvent(kind: .firstFrame, atNs: t0 + 10_000, pid: 42, window: "0x1", display: ":9")),
            .ready(reason: "stdout matched: up", atNs: t0 + 20_000),
            .hook(HookEvent(kind: .firstFrame, name: "", atNs: t0 + 30_000)),
            .exited(.exited(code: 0), atNs: t0 + 40_000),
        ]
        let expected: [String: UInt64] = [
            "automatic": 30_000, "exit": 30_000, "hook": 30_000, "listen": 30_000, "frame": 10_000,
            "stdout:^up$": 30_000, "stderr:ready": 30_000,
        ]
        for policy in Self.policies {
            let timeline = try PhaseTimeline(events: events, readiness: policy)
            #expect(timeline.metrics.timeToFirstFrameNs == expected[policy.argument], "\(policy)")
        }
        let withoutHook = events.filter { if case .hook = $0 { false } else { true } }
        #expect(try PhaseTimeline(events: withoutHook, readiness: .listen).metrics.timeToFirstFrameNs == 20_000)
        #expect(try PhaseTimeline(events: withoutHook, readiness: .automatic).metrics.timeToFirstFrameNs == 10_000)
        #expect(try PhaseTimeline(events: withoutHook, readiness: .exit).metrics.timeToFirstFrameNs == 40_000)
        #expect(try PhaseTimeline(events: withoutHook, readiness: .hook).metrics.timeToFirstFrameNs == nil)
    }

    @Test("each rule names the watchers a session sets up for it")
    func watchers() throws {
        #expect(try ReadinessPolicy.stdout("x").watchers == .standardOutput)
        #expect(try ReadinessPolicy.stderr("x").watchers == .standardError)
        #expect(ReadinessPolicy.listen.watchers == .listen)
        #expect(ReadinessPolicy.frame.watchers == .display && ReadinessPolicy.frame.requiresDisplay)
        #expect(ReadinessPolicy.automatic.watchers == .display && !ReadinessPolicy.automatic.requiresDisplay)
        #expect(ReadinessPolicy.exit.watchers.isEmpty && ReadinessPolicy.hook.watchers.isEmpty)
    }

    @Test("the pattern is compiled once, when the value is parsed; a bad one is a usage error naming it")
    func parsing() throws {
        let policy = try ReadinessPolicy(argument: "stdout:^Listening on [0-9]+$")
        #expect(policy.matches(line: "Listening on 8080", on: .standardOutput))
        #expect(!policy.matches(line: "Listening on 8080", on: .standardError))
        #expect(!policy.matches(line: "Listening on port", on: .standardOutput))
        #expect(policy.argument == "stdout:^Listening on [0-9]+$")
        for argument in ["auto", "automatic", "exit", "hook", "listen", "frame", "stderr:up"] {
            #expect(try ReadinessPolicy(argument: argument).argument == (argument == "auto" ? "automatic" : argument))
        }
        for bad in ["stdout:(", "stderr:[a-", "soon", "stdout:"] {
            #expect {
                _ = try ReadinessPolicy(argument: bad)
            } throws: { error in
                (error as? LaunchReportError)?.exitCause == .usage && "\(error)".contains("'\(bad)'")
            }
        }
    }
}
