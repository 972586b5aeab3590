import Foundation
import LaunchprofApp
import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// The Swift entry point drives the delegate in order and reports each step on the channel.
@Suite("LaunchprofApplication")
struct LaunchprofApplicationTests {
    final class RecordingDelegate: LaunchprofApplicationDelegate {
        var calls: [String] = []
        var clock: [String: UInt64] = [:]
        var declineAt: String?

        private func note(_ step: String) {
            calls.append(step)
            clock[step] = Self.now()
        }

        static func now() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }

        func willFinishLaunching(options: LaunchOptions) -> Bool {
            note("willFinishLaunching")
            return declineAt != "willFinishLaunching"
        }
        func restoreState(options: LaunchOptions) { note("restoreState") }
        func didFinishLaunching(options: LaunchOptions) -> Bool {
            note("didFinishLaunching")
            return declineAt != "didFinishLaunching"
        }
        func drawFirstFrame() { note("drawFirstFrame") }
        func run(options: LaunchOptions) -> Int32 {
            note("run")
            return 7
        }
    }

    private func events(from fd: Int32) -> [HookEvent] {
        ChildProcess.drain(fd).flatMap { HookChannelParser.parse($0, receivedAtNs: 0).events }
    }

    @Test("steps run in order, each timed as a phase, then the first frame")
    func launchSequence() throws {
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        let delegate = RecordingDelegate()
        let before = RecordingDelegate.now()
        let status = LaunchprofApplication.main(
            delegate: delegate, options: LaunchOptions(), hooks: LaunchHookChannel(descriptor: pair.writer))
        #expect(status == 7)
        #expect(delegate.calls == ["willFinishLaunching", "restoreState", "didFinishLaunching", "drawFirstFrame", "run"])

        let received = events(from: pair.reader)
        #expect(received.map(\.kind) == [.begin, .end, .begin, .end, .begin, .end, .firstFrame])
        #expect(received.map(\.name) == [
            "willFinishLaunching", "willFinishLaunching", "restoreState", "restoreState",
            "didFinishLaunching", "didFinishLaunching", "",
        ])
        // Stamps are this process's monotonic clock, in order, around each delegate call.
        #expect(received.first.map { $0.atNs >= before } == true)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.atNs <= $1.atNs })
        for (index, step) in ["willFinishLaunching", "restoreState", "didFinishLaunching"].enumerated() {
            let called = try #require(delegate.clock[step])
            #expect(received[2 * index].atNs <= called)
            #expect(received[2 * index + 1].atNs >= called)
        }
        let drawn = try #require(delegate.clock["drawFirstFrame"])
        #expect(received[6].atNs >= drawn)

        // The same events make a timeline with the three app phases and a first frame.
        let timeline = try PhaseTimeline(
            events: [.spawned(atNs: before)] + received.map { LaunchEvent.hook($0) })
        #expect(timeline.phases.map(\.name) == ["willFinishLaunching", "restoreState", "didFinishLaunching", "firstFrame"])
        #expect(timeline.warnings.isEmpty)
    }

    @Test("a delegate that declines stops the launch: no first frame", arguments: ["willFinishLaunching", "didFinishLaunching"])
    func declinedLaunch(step: String) throws {
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        let delegate = RecordingDelegate()
        delegate.declineAt = step
        let status = LaunchprofApplication.main(
            delegate: delegate, options: LaunchOptions(), hooks: LaunchHookChannel(descriptor: pair.writer))
        #expect(status == LaunchprofApplication.declinedStatus)
        #expect(delegate.calls.last == step)
        let received = events(from: pair.reader)
        #expect(!received.contains { $0.kind == .firstFrame })
        #expect(received.last.map { $0.kind == .end && $0.name == step } == true)
    }

    @Test("without a channel the hooks are silent and the launch still runs")
    func noChannel() {
        let delegate = RecordingDelegate()
        let status = LaunchprofApplication.main(
            delegate: delegate, options: LaunchOptions(), hooks: LaunchHookChannel(descriptor: -1))
        #expect(status == 7)
        #expect(delegate.calls.count == 5)
    }

    @Test("the descriptor is accepted only when it is a datagram socket")
    func descriptorValidation() throws {
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        #expect(LaunchHookChannel.descriptorForTesting(String(pair.writer)) == pair.writer)
        #expect(LaunchHookChannel.descriptorForTesting(nil) == -1)
        #expect(LaunchHookChannel.descriptorForTesting("x1") == -1)
        #expect(LaunchHookChannel.descriptorForTesting("-3") == -1)
        let path = FixtureTruth.temporaryPath()
        let file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer {
            close(file)
            unlink(path)
        }
        #expect(LaunchHookChannel.descriptorForTesting(String(file)) == -1)
    }

    @Test("ActivePrewarm=1 makes the launch reason prewarm, anything else user")
    func prewarmReason() {
        #expect(LaunchOptions.reason(activePrewarm: "1") == .prewarm)
        #expect(LaunchOptions.reason(activePrewarm: "0") == .user)
        #expect(LaunchOptions.reason(activePrewarm: "") == .user)
        #expect(LaunchOptions.reason(activePrewarm: nil) == .user)
    }
}
