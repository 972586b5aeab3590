import Synchronization

/// What earlier launches of a session taught the tracer about where things lie in the child,
/// so later launches stop for less time. Every fact is an offset from a load address, the same
/// in every launch of the same closure while the addresses themselves move (ASLR).
public final class LearnedLayout: Sendable {
    private struct Facts {
        /// Where each object's first DT_INIT_ARRAY entry points, from its load bias, keyed by
        /// the object's real path. Learned from the relocated array; with it, later launches
        /// arm the initializer breakpoints as soon as relocation starts and skip a stop.
        var initializerOffsets: [String: UInt64] = [:]
        /// The breakpoints armed when relocation starts, keyed by the program's real path.
        var recipes: [String: ArmingRecipe] = [:]
        /// The text words under the breakpoints armed at the exec stop, by program.
        var execStopWords: [String: [UInt64?]] = [:]
    }

    private let facts = Mutex(Facts())

    public init() {}

    func initializerOffset(for object: String) -> UInt64? {
        facts.withLock { $0.initializerOffsets[object] }
    }

    func remember(initializerOffset offset: UInt64, for object: String) {
        facts.withLock { $0.initializerOffsets[object] = offset }
    }

    func recipe(for program: String) -> ArmingRecipe? { facts.withLock { $0.recipes[program] } }

    func execStopWords(for program: String) -> [UInt64?]? { facts.withLock { $0.execStopWords[program] } }

    func remember(execStopWords words: [UInt64?], for program: String) {
        facts.withLock { $0.execStopWords[program] = words }
    }

    func remember(recipe: ArmingRecipe, for program: String) {
        facts.withLock { $0.recipes[program] = recipe }
    }
}
