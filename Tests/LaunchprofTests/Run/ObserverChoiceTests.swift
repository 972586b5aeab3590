import CLaunchprof
@testable import LaunchprofCore
import LaunchprofTracing
import Testing

/// `--observer auto` where both observers can run: the one whose per-boundary cost, measured on
/// this host, is lower — decided on plain values here; the measurement itself runs in the
/// uprobe observer's end-to-end tests.
@Suite("observer: auto chooses by measurement")
struct ObserverChoiceTests {
    @Test func theCheaperPerBoundaryWins() {
        let uprobesCheaper = ResolvedObserver.cheaper(UprobeCalibration(emulatedHitNs: 1_200, steppedHitNs: 3_000, ptraceStopNs: 8_700))
        #expect(uprobesCheaper.uprobes)
        #expect(uprobesCheaper.reason == "auto: a uprobe hit costs 1.20 µs here, a ptrace stop 8.70 µs")
        // A host whose uprobe hits are dear (a kernel that single-steps every probe): ptrace.
        let ptraceCheaper = ResolvedObserver.cheaper(UprobeCalibration(emulatedHitNs: 12_000, steppedHitNs: 12_000, ptraceStopNs: 8_700))
        #expect(!ptraceCheaper.uprobes)
        #expect(ptraceCheaper.reason == "auto: a ptrace stop costs 8.70 µs here, a uprobe hit 12.0 µs")
        let unmeasured = ResolvedObserver.cheaper(UprobeCalibration(emulatedHitNs: 1_200, steppedHitNs: 3_000))
        #expect(unmeasured.uprobes)
        #expect(unmeasured.reason == "auto: perf events permitted, a uprobe hit costs 1.20 µs here")
    }

    /// The real measurement on this host: a ptrace stop is timed by a traced child of its own,
    /// and `auto`'s reason names both costs as measured.
    @Test func theHostsCostsAreMeasuredAndNamed() throws {
        #expect(lp_ptrace_stop_ns(40) != 0, "a ptrace stop could not be measured")
        let type = try UprobeSupport.pmuType(sysfsRoot: "/sys").get()
        let calibration = try UprobeCalibration.measured(pmuType: type)
        let resolved = try ResolvedObserver.resolve(.auto, sysfsRoot: "/sys")
        let expected = ResolvedObserver.cheaper(calibration)
        #expect(resolved.reason == expected.reason)
        #expect((resolved.uprobes != nil) == expected.uprobes)
    }
}
