import CLaunchprof
import LaunchprofSampling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What one uprobe hit costs the probed process on this host, measured: a function is called in
/// a loop with and without a probe on it, and the difference divided by the calls. Two functions:
/// one whose probed instruction the kernel emulates, one it must single-step (see
/// `ProbePlacement`). Measured once per launchprof process, in launchprof's own process. Beside
/// them, what a ptrace stop costs a child here: `--observer auto` chooses by the two.
public struct UprobeCalibration: Sendable, Equatable {
    /// ns per hit on an emulated instruction (push, nop, call, jmp).
    public var emulatedHitNs: UInt64
    /// ns per hit on a single-stepped one.
    public var steppedHitNs: UInt64
    /// ns a child loses per ptrace stop (`lp_ptrace_stop_ns`), nil when it could not be measured.
    public var ptraceStopNs: UInt64?

    public init(emulatedHitNs: UInt64, steppedHitNs: UInt64, ptraceStopNs: UInt64? = nil) {
        self.emulatedHitNs = emulatedHitNs
        self.steppedHitNs = steppedHitNs
        self.ptraceStopNs = ptraceStopNs
    }

    public func hitNs(emulated: Bool) -> UInt64 { emulated ? emulatedHitNs : steppedHitNs }

    private static let cached = Mutex<UprobeCalibration?>(nil)

    /// The host's figures, measured on first use — once per probe holder (`UprobeHolder`, which
    /// keeps them for the launchprof processes after this one), or once per process without one.
    public static func measured(pmuType: UInt32) throws(UprobeError) -> UprobeCalibration {
        if let known = cached.withLock({ $0 }) { return known }
        let holder = UprobeHolderClient.shared()
        if let stored = holder?.calibration {
            let known = UprobeCalibration(
                emulatedHitNs: stored.emulatedHitNs, steppedHitNs: stored.steppedHitNs,
                ptraceStopNs: stored.ptraceStopNs == 0 ? nil : stored.ptraceStopNs)
            cached.withLock { $0 = known }
            return known
        }
        let emulated = try perHit(stepped: false, calls: 200, pmuType: pmuType, holder: holder)
        let stepped = try perHit(stepped: true, calls: 50, pmuType: pmuType, holder: holder)
        let stop = lp_ptrace_stop_ns(40)
        let result = UprobeCalibration(emulatedHitNs: emulated, steppedHitNs: stepped, ptraceStopNs: stop == 0 ? nil : stop)
        holder?.store(.init(emulatedHitNs: emulated, steppedHitNs: stepped, ptraceStopNs: result.ptraceStopNs ?? 0))
        cached.withLock { $0 = result }
        return result
    }

    /// Short loops, many of them: on a loaded machine a long loop is always preempted somewhere.
    /// (fastest of 15 probed loops − fastest of 15 bare ones) ÷ calls: the fastest loop is
    /// the one the rest of a loaded machine disturbed least. The bare loops run first: a
    /// disabled event would still trap, only a closed one does not.
    private static func perHit(
        stepped: Bool, calls: Int32, pmuType: UInt32, holder: UprobeHolderClient?
    ) throws(UprobeError) -> UInt64 {
        typealias Target = @convention(c) (UInt64) -> UInt64
        let target: Target = stepped ? lp_uprobe_calibration_stepped : lp_uprobe_calibration_emulated
        let function = UInt64(UInt(bitPattern: unsafeBitCast(target, to: UnsafeRawPointer.self)))
        guard let mapping = ProcessMappings.files(getpid()).first(where: { function >= $0.start && function < $0.end }) else {
            throw .unavailable(reason: "launchprof's own code is not in a file mapping (/proc/self/maps)")
        }
        let offset = function - mapping.start + mapping.offset
        func fastest(_ loop: () -> UInt64) -> UInt64 {
            (0..<15).map { _ in loop() }.min() ?? 0
        }
        let bare = fastest { lp_uprobe_calibration_loop(stepped ? 1 : 0, calls) }
        var fd: Int32 = -1
        var id: UInt64 = 0
        // The holder keeps this probe registered for its own process only, so the bare loops
        // above did not trap and closing ours below does not wait for a release.
        let tracepoint = holder?.hold(path: mapping.path, offset: offset, scope: .holderOnly, lingers: false)
        let error = if let tracepoint {
            lp_tracepoint_probe_open(getpid(), -1, tracepoint, -1, &fd, &id)
        } else {
            lp_uprobe_open(getpid(), -1, pmuType, mapping.path, offset, -1, &fd, &id)
        }
        guard error == 0 else {
            throw .perf(operation: "uprobe open", subject: "\(mapping.path)+0x\(String(offset, radix: 16))", errno: error)
        }
        // Each hit writes its sample, as in a launch.
        var base: UnsafeMutableRawPointer?
        var length = 0
        _ = lp_perf_ring_map(fd, 16, &base, &length)
        let probed = fastest { lp_uprobe_calibration_loop(stepped ? 1 : 0, calls) }
        if let base { lp_perf_ring_unmap(base, length) }
        if tracepoint != nil {
            close(fd)
        } else {
            var fds = [fd]
            lp_perf_release_in_background(&fds, 1)
        }
        return (probed &- min(bare, probed)) / UInt64(calls)
    }
}
