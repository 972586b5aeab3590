import CLaunchprof
import Foundation
import LaunchprofELF
import LaunchprofReport
import LaunchprofSystem
import Testing
@testable import LaunchprofTracing

#if canImport(Glibc)
import Glibc
#endif

/// The breakpoint observer on its own, through the `LaunchObserver` seams only, driven by a
/// minimal stop loop over `TracedProcesses` (no `LaunchTracer`): what it records must match
/// the fixture's own clock.
@Suite("Breakpoint observer", .serialized)
struct BreakpointObserverTests {
    @Test("exec stop → traps → main: the boundaries in order, bracketing the library constructor's own times")
    func boundariesThroughTheSeams() throws {
        let app = try RunFixtures.app(libraries: ["alpha"])
        let image = try ELFImage.read(path: app)
        let plan = ImagePlanner.plan(program: image, closure: DependencyResolver.system().resolve(program: image, environment: [:]))
        let truth = FixtureTruth.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: truth) }
        lp_spawn_prepare()
        let thread = DedicatedThread { () -> Result<([LaunchEvent], Bool), TracerError> in
            do throws(TracerError) {
                let spawn = TracedProcesses.Spawn(
                    executable: app, arguments: [app], environment: ["LP_FIXTURE_TRUTH=\(truth)", "LP_CTOR_alpha_BUSY_US=2000"])
                var (processes, spawnedAt) = try TracedProcesses.spawn(spawn)
                defer { processes.killAndReap() }
                let pid = processes.child
                var observer: any LaunchObserver = BreakpointObserver(pid: pid, learned: LearnedLayout())
                var events: [LaunchEvent] = [.spawned(atNs: spawnedAt)]
                guard let first = try Ptrace.wait(pid), first.kind == LP_WAIT_STOPPED else { return .success((events, false)) }
                try Ptrace.setOptions(pid, Int32(LP_PTRACE_O_EXITKILL))
                try observer.startImage(0, plan: plan, into: &events)
                var signal: Int32 = 0
                while !observer.reachedMain {
                    try Ptrace.cont(pid, signal: signal)
                    signal = 0
                    guard let stop = try Ptrace.wait(pid) else { continue }
                    if stop.kind != LP_WAIT_STOPPED {
                        processes.ended(pid)
                        break
                    }
                    if stop.value == SIGTRAP, try observer.childTrapped(at: stop.at_ns, into: &events) { continue }
                    signal = stop.value
                }
                return .success((events, observer.reachedMain))
            } catch {
                return .failure(error)
            }
        }
        let (events, reachedMain) = try thread.join().get()
        #expect(reachedMain, "\(events)")
        let names = events.compactMap { event -> String? in
            switch event {
            case .spawned: "spawned"
            case .relocationStarted: "relocationStarted"
            case .relocationFinished: "relocationFinished"
            case .objectInitStarted(let path, _): "init " + (path.split(separator: "/").last.map(String.init) ?? path)
            case .programInitStarted: "programInit"
            case .mainReached: "main"
            default: nil
            }
        }
        #expect(names.first == "spawned" && names.last == "main", "\(names)")
        #expect(names.firstIndex(of: "relocationStarted") ?? .max < names.firstIndex(of: "relocationFinished") ?? -1, "\(names)")
        #expect(names.contains("init libalpha.so") && names.contains("programInit"), "\(names)")
        let times = events.compactMap(\.timeNs)
        #expect(times == times.sorted(), "times in the order observed: \(events)")
        // The fixture's own clock: its constructor ran after its boundary, and before main.
        let constructor = try #require(try FixtureTruth(contentsOf: truth).first("ctor", "libalpha.so"))
        var initAt: UInt64?
        var mainAt: UInt64?
        for event in events {
            if case .objectInitStarted(let path, let time) = event, path.hasSuffix("/libalpha.so") { initAt = time }
            if case .mainReached(let time) = event { mainAt = time }
        }
        #expect(try #require(initAt) <= constructor.beginNs)
        #expect(constructor.endNs <= (try #require(mainAt)))
    }
}
