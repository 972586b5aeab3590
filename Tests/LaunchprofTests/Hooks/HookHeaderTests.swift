import Foundation
import LaunchprofReport
import Testing

/// `launchprof.h` compiled into real fixtures: inert without launchprof, harmless with a bad
/// descriptor, and exact (the app's own clock) with a channel.
@Suite("Hook header")
struct HookHeaderTests {
    static let baseEnvironment = ["PATH": "/usr/bin:/bin"]

    @Test("without launchprof every call does nothing and errno survives")
    func inertWithoutChannel() throws {
        let program = try RunFixtures.hooksCheck()
        let status = try ChildProcess.run(program, environment: Self.baseEnvironment)
        #expect(status == .exited(0))
    }

    @Test(
        "a bad LAUNCHPROF_HOOK_FD never fails, blocks or signals",
        arguments: ["", "abc", "-1", "3x", "99999999999", "57"])
    func badVariable(value: String) throws {
        let program = try RunFixtures.hooksCheck()
        let status = try ChildProcess.run(
            program, environment: Self.baseEnvironment.merging(["LAUNCHPROF_HOOK_FD": value]) { $1 })
        #expect(status == .exited(0))
    }

    @Test("a descriptor that is a file, not our socket, gets nothing")
    func regularFileDescriptor() throws {
        let program = try RunFixtures.hooksCheck()
        let path = FixtureTruth.temporaryPath() + ".notasocket"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        let status = try ChildProcess.run(
            program, environment: Self.baseEnvironment.merging(["LAUNCHPROF_HOOK_FD": "5"]) { $1 },
            descriptors: [5: fd])
        #expect(status == .exited(0))
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        #expect(info.st_size == 0)
    }

    @Test("a stream socket whose reader is gone raises no SIGPIPE")
    func streamSocketWithClosedPeer() throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        let program = try RunFixtures.hooksCheck()
        let status = try ChildProcess.run(
            program, environment: Self.baseEnvironment.merging(["LAUNCHPROF_HOOK_FD": "3"]) { $1 },
            descriptors: [3: fds[1]])
        #expect(status == .exited(0))
    }

    @Test("a datagram channel whose reader is gone: sends fail quietly")
    func datagramWithClosedPeer() throws {
        let pair = try ChildProcess.hookChannelPair()
        close(pair.reader)
        defer { close(pair.writer) }
        let program = try RunFixtures.hooksCheck()
        let status = try ChildProcess.run(
            program, environment: Self.baseEnvironment.merging(["LAUNCHPROF_HOOK_FD": "3"]) { $1 },
            descriptors: [3: pair.writer])
        #expect(status == .exited(0))
    }

    @Test("a full channel never blocks the app")
    func fullChannelDoesNotBlock() throws {
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        let program = try RunFixtures.hooksCheck()
        // 6 events a round: far more than the socket queues while nobody reads.
        let status = try ChildProcess.run(
            program,
            environment: Self.baseEnvironment.merging([
                "LAUNCHPROF_HOOK_FD": "3", "LP_HOOK_REPEAT": "5000",
            ]) { $1 },
            descriptors: [3: pair.writer], timeout: 60)
        #expect(status == .exited(0))
        let received = ChildProcess.drain(pair.reader)
        #expect(received.count > 0)
        #expect(received.count < 6 * 5000)
    }

    @Test("C++ includes the header warning-free and gets the same events")
    func cplusplus() throws {
        let program = try RunFixtures.hooksCheck(cplusplus: true)
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        let status = try ChildProcess.run(
            program, environment: Self.baseEnvironment.merging(["LAUNCHPROF_HOOK_FD": "4"]) { $1 },
            descriptors: [4: pair.writer])
        #expect(status == .exited(0))
        let events = ChildProcess.drain(pair.reader).flatMap { HookChannelParser.parse($0, receivedAtNs: 0).events }
        #expect(events.map(\.kind) == [.begin, .end, .extend, .finishExtend, .firstFrame])
        #expect(events.map(\.name) == ["cxxPhase", "cxxPhase", "cxx-task", "cxx-task", ""])
    }

    @Test("with a channel, events arrive stamped by the app's own clock")
    func eventsMatchTheFixturesClock() throws {
        let app = try RunFixtures.app()
        let pair = try ChildProcess.hookChannelPair()
        defer {
            close(pair.reader)
            close(pair.writer)
        }
        let truthPath = FixtureTruth.temporaryPath()
        defer { unlink(truthPath) }
        let status = try ChildProcess.run(
            app,
            environment: Self.baseEnvironment.merging([
                "LAUNCHPROF_HOOK_FD": "3", "LP_FIXTURE_TRUTH": truthPath,
                "LP_PHASES": "willFinishLaunching:2000:0,restoreState:0:3000,didFinishLaunching:1000:1000",
                "LP_TASKS": "warm-cache:4000,sync-inbox:2000", "LP_DRAW_US": "500",
            ]) { $1 },
            descriptors: [3: pair.writer])
        #expect(status == .exited(0))
        let truth = try FixtureTruth(contentsOf: truthPath)
        var events: [HookEvent] = []
        for datagram in ChildProcess.drain(pair.reader) {
            let parsed = HookChannelParser.parse(datagram, receivedAtNs: 0)
            #expect(parsed.rejectedLines.isEmpty)
            events += parsed.events
        }

        // The fixture records the stamp each hook sent (LAUNCHPROF_RECORD_STAMPS): what arrives
        // must be exactly that, and the spans must hold the work the fixture was asked for.
        let phases = truth.all("phase")
        #expect(phases.map(\.name) == ["willFinishLaunching", "restoreState", "didFinishLaunching"])
        for phase in phases {
            let begin = try #require(events.first { $0.kind == .begin && $0.name == phase.name })
            let end = try #require(events.first { $0.kind == .end && $0.name == phase.name })
            #expect(begin.atNs == phase.beginNs)
            #expect(end.atNs == phase.endNs)
        }
        #expect(phases[0].durationNs >= 2_000_000)
        #expect(phases[1].durationNs >= 3_000_000)
        #expect(phases[2].durationNs >= 2_000_000)
        let frame = try #require(truth.first("first-frame"))
        let frameEvent = try #require(events.first { $0.kind == .firstFrame })
        #expect(frameEvent.atNs == frame.beginNs)
        #expect(frameEvent.atNs >= phases[2].endNs + 500_000)
        #expect(events.filter { $0.kind == .firstFrame }.count == 1)

        for task in truth.all("task") {
            let extend = try #require(events.first { $0.kind == .extend && $0.name == task.name })
            let finish = try #require(events.first { $0.kind == .finishExtend && $0.name == task.name })
            #expect(extend.atNs == task.beginNs)
            #expect(finish.atNs == task.endNs)
        }
        #expect(try #require(truth.first("task", "warm-cache")).durationNs >= 4_000_000)
        #expect(Set(events.filter { $0.kind == .extend }.map(\.name)) == ["warm-cache", "sync-inbox"])
    }
}
