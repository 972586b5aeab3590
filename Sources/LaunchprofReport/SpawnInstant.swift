/// When a run's child was spawned, on the system's clocks: what lines a run (whose phases count
/// from its spawn) up with a system trace (perf, ftrace, Perfetto's own recording).
public struct SpawnInstant: Sendable, Equatable, Codable {
    /// `CLOCK_MONOTONIC`, ns: the tracer's own clock (perf and ftrace's `mono` clock).
    public var monotonicNs: UInt64
    /// `CLOCK_BOOTTIME`, ns: monotonic plus time suspended (Perfetto's default trace clock).
    public var boottimeNs: UInt64

    public init(monotonicNs: UInt64, boottimeNs: UInt64) {
        self.monotonicNs = monotonicNs
        self.boottimeNs = boottimeNs
    }
}
