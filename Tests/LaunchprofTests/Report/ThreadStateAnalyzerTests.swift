import LaunchprofAnalysis
import LaunchprofReport
import Testing

/// The thread-state analysis on scripted scheduler events (the real source is tested end to end
/// in ThreadStateSourceTests): every nanosecond in one state, waits told apart by their stacks,
/// the causes and the reasons' thresholds.
private let ms: UInt64 = 1_000_000

@Suite("thread states: the analysis")
struct ThreadStateAnalyzerTests {
    static let main: Int32 = 500
    static let spawner: Int32 = 100
    static let stacks: [[String]] = [
        ["__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep", "__x64_sys_clock_nanosleep"],
        ["__schedule", "schedule", "futex_do_wait", "__futex_wait", "futex_wait", "do_futex", "__x64_sys_futex"],
        ["__schedule", "schedule", "io_schedule", "folio_wait_bit_common", "filemap_get_pages", "filemap_read", "vfs_read", "__x64_sys_read"],
        ["__schedule", "schedule", "do_sys_poll", "__x64_sys_poll"],
    ]

    static func switchRecord(_ t: UInt64, cpu: Int32 = 0, from: Int32, pid: Int32?, state: UInt64 = 0, to: Int32, name: String = "task")
        -> SchedulerTrace.Switch
    {
        .init(
            timeNs: t, cpu: cpu, previousTID: from, previousPID: pid, previousName: from == main ? "app" : name,
            previousState: state, nextTID: to, nextName: to == main ? "app" : name)
    }

    static func wakeup(_ t: UInt64, by tid: Int32, pid: Int32, irq: Bool = false, of wakee: Int32 = main) -> SchedulerTrace.Wakeup {
        .init(timeNs: t, cpu: 0, wakerPID: pid, wakerTID: tid, inInterrupt: irq, wakeeTID: wakee, wakeeName: "app")
    }

    /// The main thread over 100 ms from a spawn at 1 s: created at +0.1 ms; runs to 10, preempted
    /// by "cc1plus" (pid 900) until 20; nanosleep 21–40 ended by a timer, runs at 41; futex 50–70
    /// released by its own thread 501, runs at 70; reads a file 80–90 (woken by an interrupt),
    /// runs to the end.
    static func trace() -> SchedulerTrace {
        let s = 1_000 * ms
        var trace = SchedulerTrace(stacks: stacks, launchprofPID: 99, spawningThread: spawner, wakeupsAbove: 400)
        trace.newTasks = [wakeup(s + ms / 10, by: spawner, pid: 99, of: main)]
        trace.switches = [
            switchRecord(s + ms / 10, from: spawner, pid: 99, state: 2, to: main),
            switchRecord(s + 10 * ms, from: main, pid: main, state: 0, to: 900, name: "cc1plus"),
            switchRecord(s + 20 * ms, from: 900, pid: 900, state: 0, to: main, name: "cc1plus"),
            switchRecord(s + 21 * ms, from: main, pid: main, state: 1, to: 0, name: "swapper/0"),
            switchRecord(s + 41 * ms, from: 0, pid: 0, state: 0, to: main, name: "swapper/0"),
            switchRecord(s + 50 * ms, from: main, pid: main, state: 1, to: 501, name: "worker"),
            switchRecord(s + 70 * ms, from: 501, pid: main, state: 1, to: main, name: "worker"),
            switchRecord(s + 80 * ms, from: main, pid: main, state: 2, to: 0, name: "swapper/0"),
            switchRecord(s + 90 * ms, from: 0, pid: 0, state: 0, to: main, name: "swapper/0"),
        ]
        trace.followedSwitchOuts = [
            .init(record: trace.switches[1], stack: nil),
            .init(record: trace.switches[3], stack: 0),
            .init(record: trace.switches[5], stack: 1),
            .init(record: trace.switches[7], stack: 2),
        ]
        trace.wakeups = [
            wakeup(s + 40 * ms, by: 0, pid: 0, irq: true),
            wakeup(s + 70 * ms, by: 501, pid: main),
            wakeup(s + 90 * ms, by: 0, pid: 0, irq: true),
        ]
        trace.pageCacheAdds = [.init(timeNs: s + 80 * ms - 1000, tid: main, device: .init(major: 8, minor: 1), inode: 42, pages: 32)]
        trace.knownFiles = [.init(device: .init(major: 8, minor: 1), inode: 42): "/usr/lib/libbig.so.1"]
        return trace
    }

    static func analyse(_ trace: SchedulerTrace, phases: [LaunchPhase]) -> ThreadStateAnalyzer.Result {
        ThreadStateAnalyzer().analyse(trace, spawnNs: 1_000 * ms, mainThread: main, launchEndNs: 100 * ms, phases: phases)
    }

    @Test("every nanosecond of every phase in exactly one state, each wait told apart by its stack")
    func statesAddUp() throws {
        let phases = [
            LaunchPhase(name: "exec", startNs: 0, durationNs: 5 * ms),
            LaunchPhase(name: "main", startNs: 5 * ms, durationNs: 0),
            LaunchPhase(name: "work", startNs: 5 * ms, durationNs: 95 * ms),
        ]
        let result = Self.analyse(Self.trace(), phases: phases)
        let launch = result.states.launch
        #expect(launch.totalNs == 100 * ms)
        #expect(launch.runnableNs == 11 * ms, "preempted 10–20, woken at 40 and run at 41")
        #expect(launch.runningNs == 40 * ms, "the spawning thread until the child exists, then the child")
        #expect(launch.sleepingNs == 19 * ms)
        #expect(launch.lockNs == 20 * ms)
        #expect(launch.diskIONs == 10 * ms)
        #expect(result.phases[1].threadState == nil, "an instant has no states")
        for phase in result.phases where phase.durationNs > 0 {
            #expect(phase.threadState?.totalNs == phase.durationNs, "\(phase.name)")
        }
        let states = result.states
        #expect(states.cpuCompetitors.first?.task.process == "cc1plus")
        #expect(states.cpuCompetitors.first?.ns == 10 * ms)
        #expect(states.lockHolders.first?.task.tid == 501)
        #expect(states.lockHolders.first?.ownProcess == true)
        #expect(states.fileReads.first?.path == "/usr/lib/libbig.so.1")
        #expect(states.fileReads.first?.waitNs == 10 * ms)
        #expect(states.fileReads.first?.pagesRead == 32)
        #expect(states.wakers.contains { $0.kind == .timer && $0.state == .sleeping && $0.ns == 19 * ms })
        #expect(states.timeline.map(\.durationNs).reduce(0, +) == 100 * ms)
        let lockSpan: ThreadStateSpan? = states.timeline.first { $0.state == ThreadState.lock }
        let diskSpan: ThreadStateSpan? = states.timeline.first { $0.state == ThreadState.diskIO }
        #expect(lockSpan?.blockedIn == "futex")
        #expect(diskSpan?.blockedIn == "read")
    }

    @Test("the reasons pass their thresholds, ranked by time, with the phase that holds them")
    func reasons() throws {
        let phases = [LaunchPhase(name: "work", startNs: 0, durationNs: 100 * ms)]
        let reasons: [SlowLaunchReason] = Self.analyse(Self.trace(), phases: phases).states.reasons
        let codes: [SlowLaunchReason.Code] = reasons.map { $0.code }
        #expect(codes.contains(.lockContention))
        #expect(codes.contains(.diskIO))
        #expect(codes.contains(.timer))
        // Runnable is 11.1% of the launch: under the 15% that raises CPU contention.
        #expect(!codes.contains(.cpuContention))
        let times: [UInt64] = reasons.map { $0.ns }
        #expect(times == times.sorted(by: >))
        let lock = try #require(reasons.first { $0.code == .lockContention })
        #expect(lock.message == "20.0 ms waiting on a lock held by thread worker (501) (1 wait)")
        #expect(lock.threshold == "≥ 10% of the launch and ≥ 1.00 ms")
        #expect(lock.phase == "work")
        let disk = try #require(reasons.first { $0.code == .diskIO })
        #expect(disk.message == "10.0 ms reading libbig.so.1 from disk (cold cache)")
    }

    @Test("a wake-up recorded just before the wait's switch-out ended it: no wait")
    func wakeupRace() {
        let s = 1_000 * ms
        var trace = SchedulerTrace(stacks: Self.stacks, spawningThread: Self.spawner)
        trace.newTasks = [Self.wakeup(s, by: Self.spawner, pid: 99, of: Self.main)]
        trace.switches = [
            Self.switchRecord(s, from: Self.spawner, pid: 99, state: 2, to: Self.main),
            Self.switchRecord(s + 10 * ms, from: Self.main, pid: Self.main, state: 2, to: 900),
            Self.switchRecord(s + 13 * ms, from: 900, pid: 900, to: Self.main),
        ]
        trace.followedSwitchOuts = [.init(record: trace.switches[1], stack: 2)]
        trace.wakeups = [Self.wakeup(s + 10 * ms - 5_000, by: 0, pid: 0, irq: true)]
        let result = ThreadStateAnalyzer().analyse(
            trace, spawnNs: s, mainThread: Self.main, launchEndNs: 20 * ms, phases: [])
        #expect(result.states.launch.diskIONs == 0)
        #expect(result.states.launch.runnableNs == 3 * ms)
    }

    @Test("perf's own switch-in stands in for a tracepoint record the kernel hid")
    func hiddenSwitchIn() {
        let s = 1_000 * ms
        var trace = SchedulerTrace(stacks: Self.stacks, spawningThread: Self.spawner)
        trace.newTasks = [Self.wakeup(s, by: Self.spawner, pid: 99, of: Self.main)]
        trace.switches = [
            Self.switchRecord(s, from: Self.spawner, pid: 99, state: 2, to: Self.main),
            Self.switchRecord(s + 10 * ms, from: Self.main, pid: Self.main, to: 69, name: "hidden"),
            // 69's switch-out (to main at +12) is not recorded; main's next switch-out is.
            Self.switchRecord(s + 15 * ms, from: Self.main, pid: Self.main, to: 900),
        ]
        trace.followedSwitchOuts = [.init(record: trace.switches[1], stack: nil), .init(record: trace.switches[2], stack: nil)]
        trace.followedSwitchIns = [
            .init(timeNs: s + 2_000, cpu: 0, tid: Self.main), .init(timeNs: s + 12 * ms, cpu: 0, tid: Self.main),
        ]
        let result = ThreadStateAnalyzer().analyse(
            trace, spawnNs: s, mainThread: Self.main, launchEndNs: 15 * ms, phases: [])
        #expect(result.states.launch.runnableNs == 2 * ms)
        #expect(result.states.launch.runningNs == 13 * ms)
        #expect(result.states.cpuCompetitors.first?.task.tid == 69)
    }

    @Test("CPU contention at 15% of the launch, not below; nothing under 1 ms")
    func contentionThreshold() {
        func runnable(_ ns: UInt64, launch: UInt64) -> Bool {
            let s = 1_000 * ms
            var trace = SchedulerTrace(spawningThread: Self.spawner)
            trace.newTasks = [Self.wakeup(s, by: Self.spawner, pid: 99, of: Self.main)]
            trace.switches = [
                Self.switchRecord(s, from: Self.spawner, pid: 99, state: 2, to: Self.main),
                Self.switchRecord(s + 1_000, from: Self.main, pid: Self.main, to: 900, name: "cc1plus"),
                Self.switchRecord(s + 1_000 + ns, from: 900, pid: 900, to: Self.main, name: "cc1plus"),
            ]
            let result = ThreadStateAnalyzer().analyse(trace, spawnNs: s, mainThread: Self.main, launchEndNs: launch, phases: [])
            return result.states.reasons.contains { $0.code == .cpuContention }
        }
        #expect(runnable(15 * ms, launch: 100 * ms))
        #expect(!runnable(14 * ms, launch: 100 * ms))
        #expect(!runnable(ms / 2, launch: 2 * ms), "25% of a 2 ms launch is under the 1 ms floor")
    }

    @Test("a prewarmed launch's hold is in no state, cause or reason: the launch's states add up without it")
    func prewarmHold() {
        let s = 1_000 * ms
        var trace = SchedulerTrace(spawningThread: Self.spawner)
        trace.newTasks = [Self.wakeup(s, by: Self.spawner, pid: 99, of: Self.main)]
        // Stopped by launchprof at main (+10 ms), frozen 10–90, resumed (woken by launchprof) at 90.
        trace.switches = [
            Self.switchRecord(s, from: Self.spawner, pid: 99, state: 2, to: Self.main),
            Self.switchRecord(s + 10 * ms, from: Self.main, pid: Self.main, state: 8, to: 0, name: "swapper/0"),
            Self.switchRecord(s + 90 * ms, from: 0, pid: 0, to: Self.main, name: "swapper/0"),
        ]
        trace.followedSwitchOuts = [.init(record: trace.switches[1], stack: nil)]
        trace.wakeups = [Self.wakeup(s + 90 * ms, by: 99, pid: 99)]
        func analyse(frozen: Range<UInt64>?) -> ThreadStateAnalyzer.Result {
            ThreadStateAnalyzer().analyse(
                trace, spawnNs: s, mainThread: Self.main, launchEndNs: 100 * ms,
                phases: [LaunchPhase(name: "didFinishLaunching", startNs: 90 * ms, durationNs: 10 * ms)], frozen: frozen)
        }
        let held = analyse(frozen: 10 * ms..<90 * ms).states
        #expect(held.launch.totalNs == 20 * ms, "100 ms less the 80 ms hold")
        #expect(held.launch.tracedNs == 0 && held.launch.runningNs == 20 * ms)
        #expect(!held.timeline.contains { $0.startNs < 90 * ms && $0.endNs > 10 * ms })
        #expect(!held.reasons.contains { $0.code == .launchprof } && held.wakers.isEmpty, "\(held.reasons) \(held.wakers)")
        // Shares are of the launch without the hold: 20 ms on a CPU is all of it.
        #expect(held.reasons.first { $0.code == .cpuBound }?.percentOfLaunch == 100)
        // Without the hold left out, the freeze reads as launchprof holding the thread stopped.
        let unheld = analyse(frozen: nil).states
        #expect(unheld.launch.tracedNs == 80 * ms)
        #expect(unheld.reasons.contains { $0.code == .launchprof })
    }
}
