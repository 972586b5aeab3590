// Flags name the work's owner, in Swift: `now()` is shared by a light caller (`stampStart`) and a
// heavy one (`Catalog.parse()` through `crunch`, LP_SAMPLE_CPU_US of CPU time, default 150 ms) in
// didFinishLaunching. It speaks the hook protocol itself. `Catalog.parse` and `crunch` are public
// (global symbols: in .dynsym when linked with --export-dynamic and stripped); `now` is internal. Truth (LP_FIXTURE_TRUTH):
// "parse <thread-cpu-ns> <wall-ns>".
#if canImport(Glibc)
import Glibc
#endif

func hook(_ line: String) {
    guard let text = getenv("LAUNCHPROF_HOOK_FD"), let fd = Int32(String(cString: text)) else { return }
    let message = line + "\n"
    _ = message.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
}

func clock(_ id: clockid_t) -> UInt64 {
    var time = timespec()
    clock_gettime(id, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The shared helper: this thread's CPU time.
@inline(never)
func now() -> UInt64 { clock(CLOCK_THREAD_CPUTIME_ID) }

var started: UInt64 = 0

@inline(never)
func stampStart() { started = now() }

@inline(never)
public func crunch(microseconds: UInt64) {
    let start = now()
    while now() - start < microseconds * 1000 {}
}

public struct Catalog {
    @inline(never)
    public func parse(microseconds: UInt64) {
        crunch(microseconds: microseconds)
    }
}

let work = getenv("LP_SAMPLE_CPU_US").flatMap { UInt64(String(cString: $0)) } ?? 150_000
hook("begin - didFinishLaunching")
stampStart()
let cpu = clock(CLOCK_THREAD_CPUTIME_ID), wall = clock(CLOCK_MONOTONIC)
Catalog().parse(microseconds: work)
let line = "parse \(clock(CLOCK_THREAD_CPUTIME_ID) - cpu) \(clock(CLOCK_MONOTONIC) - wall)\n"
if let path = getenv("LP_FIXTURE_TRUTH") {
    let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
    _ = line.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}
hook("end - didFinishLaunching")
hook("first-frame -")
