// launchprof-demo-swift: the whole app lifecycle on `LaunchprofApplication.main`.
//
//   pre-main             a C constructor (LaunchprofDemoSupport)   LAUNCHPROF_DEMO_INIT_US    (20000)
//   willFinishLaunching  busy work                                 LAUNCHPROF_DEMO_WILL_US    (3000)
//   restoreState         blocking work                             LAUNCHPROF_DEMO_RESTORE_US (4000)
//   didFinishLaunching   busy work                                 LAUNCHPROF_DEMO_DID_US     (4000)
//   first frame          after drawing (busy)                      LAUNCHPROF_DEMO_DRAW_US    (1000)
//   background/foreground/terminate: by signal under launchprof (`LifecycleEvent`), each logged
//
// `launchprof prewarm` freezes it at main (after the 20 ms constructor) or before
// willFinishLaunching; `launchprof run --resume-cycles K` sends it to the background and back.
// Without launchprof it launches and exits 0.
import LaunchprofApp
import LaunchprofDemoSupport

#if canImport(Glibc)
import Glibc
#endif

func microseconds(_ name: String, _ fallback: UInt64) -> UInt64 {
    guard let text = getenv(name).map({ String(cString: $0) }), let value = UInt64(text) else { return fallback }
    return min(value, 10_000_000)
}

func nowNs() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func busy(_ us: UInt64) {
    let end = nowNs() + us * 1000
    while nowNs() < end {}
}

func blocking(_ us: UInt64) {
    var delay = timespec(tv_sec: Int(us / 1_000_000), tv_nsec: Int(us % 1_000_000) * 1000)
    var remaining = timespec()
    while nanosleep(&delay, &remaining) != 0 && errno == EINTR { delay = remaining }
}

func log(_ text: String) {
    let line = "launchprof-demo-swift: \(text)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

final class DemoDelegate: LaunchprofApplicationDelegate {
    func willFinishLaunching(options: LaunchOptions) -> Bool {
        log("launching (\(options.reason == .prewarm ? "prewarmed" : "by the user"); pre-main work took \(lp_demo_init_ns() / 1000) µs)")
        busy(microseconds("LAUNCHPROF_DEMO_WILL_US", 3000))
        return true
    }
    func restoreState(options: LaunchOptions) { blocking(microseconds("LAUNCHPROF_DEMO_RESTORE_US", 4000)) }
    func didFinishLaunching(options: LaunchOptions) -> Bool {
        busy(microseconds("LAUNCHPROF_DEMO_DID_US", 4000))
        return true
    }
    func drawFirstFrame() { busy(microseconds("LAUNCHPROF_DEMO_DRAW_US", 1000)) }
    func willResignActive() { log("willResignActive") }
    func didEnterBackground() { log("didEnterBackground") }
    func willEnterForeground() { log("willEnterForeground") }
    func didBecomeActive() { log("didBecomeActive") }
    func willTerminate() { log("willTerminate") }

    func run(options: LaunchOptions) -> Int32 {
        // Under launchprof the app lives until launchprof ends it, hearing its transitions.
        guard getenv("LAUNCHPROF_HOOK_FD") != nil else { return 0 }
        while true { pause() }
    }
}

exit(LaunchprofApplication.main(delegate: DemoDelegate()))
