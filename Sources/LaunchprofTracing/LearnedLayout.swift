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
        /// The link map as last walked, by program, so a later walk reads no name it knows.
        var chains: [String: [LinkMap.Object]] = [:]
        /// How many times a launch had to walk the link map (a first launch, or a recipe that
        /// no longer held: in a large closure, a mapping can land in another gap).
        var chainWalks = 0
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

    var chainWalks: Int { facts.withLock { $0.chainWalks } }

    func chain(for program: String) -> [LinkMap.Object] { facts.withLock { $0.chains[program] ?? [] } }

    func remember(chain: [LinkMap.Object], for program: String) {
        facts.withLock {
            $0.chains[program] = chain
            $0.chainWalks += 1
        }
    }

    func execStopWords(for program: String) -> [UInt64?]? { facts.withLock { $0.execStopWords[program] } }

    func remember(execStopWords words: [UInt64?], for program: String) {
        facts.withLock { $0.execStopWords[program] = words }
    }

    func remember(recipe: ArmingRecipe, for program: String) {
        facts.withLock { $0.recipes[program] = recipe }
    }
}
