import Synchronization

/// Where each object's first DT_INIT_ARRAY entry points, as an offset from the object's load
/// bias, learned from the relocated array in one launch and reused by the next ones: the offset
/// is the same in every launch (only the bias moves), so later launches arm the initializer
/// breakpoints as soon as relocation starts and skip a stop. Keyed by the object's real path.
public final class LearnedInitializers: Sendable {
    private let offsets = Mutex<[String: UInt64]>([:])

    public init() {}

    func offset(for object: String) -> UInt64? { offsets.withLock { $0[object] } }

    func remember(_ offset: UInt64, for object: String) { offsets.withLock { $0[object] = offset } }
}
