// The sampler's Swift fixture: LayoutEngine.computeLayout(microseconds:) computes for
// LP_SAMPLE_CPU_US of CPU time (default 100 ms) in didFinishLaunching. It speaks the hook
// protocol itself (one line per event on $LAUNCHPROF_HOOK_FD). Truth (LP_FIXTURE_TRUTH):
// "computeLayout <thread-cpu-ns> <wall-ns>".
#if canImport(Glibc)
import Glibc
#endif

func hook(_ line: String) {
    guard let text = getenv("LAUNCHPROF_HOOK_FD"), let fd = Int32(String(cString: text)) else { return }
    let message = line + "\n"
    _ = message.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
}

func clock(_ id: clockid_t) -> UInt64 {
    var now = timespec()
    clock_gettime(id, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

struct LayoutEngine {
    @inline(never)
    func computeLayout(microseconds: UInt64) -> UInt64 {
        let start = clock(CLOCK_THREAD_CPUTIME_ID)
        var x: UInt64 = 1
        while clock(CLOCK_THREAD_CPUTIME_ID) - start < microseconds * 1000 {
            for _ in 0..<50_000 { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        }
        return x
    }
}

let work = getenv("LP_SAMPLE_CPU_US").flatMap { UInt64(String(cString: $0)) } ?? 100_000
hook("begin - didFinishLaunching")
let cpu = clock(CLOCK_THREAD_CPUTIME_ID), wall = clock(CLOCK_MONOTONIC)
let value = LayoutEngine().computeLayout(microseconds: work)
let line = "computeLayout \(clock(CLOCK_THREAD_CPUTIME_ID) - cpu) \(clock(CLOCK_MONOTONIC) - wall)\n"
if let path = getenv("LP_FIXTURE_TRUTH") {
    let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    _ = line.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}
hook("end - didFinishLaunching")
hook("first-frame -")
if value == 42 { print("unlikely") }
