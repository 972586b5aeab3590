/// Something pre-main code did during a prewarm that is unsafe before the user launches the app:
/// its result goes stale during the hold, or it acts for a user who has not asked yet. A `note`
/// is worth knowing but no reason against prewarming (randomness in a spawned process, a call
/// the C library or a language runtime made on its own behalf).
public struct PrewarmHazard: Sendable, Equatable, Hashable, Codable {
    public enum Severity: String, Sendable, Codable, CaseIterable {
        /// Makes the program unsafe to prewarm.
        case hazard
        /// Reported, but the program stays prewarm-safe.
        case note
    }

    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// Read the wall clock: the time is stale after the hold.
        case wallClock
        /// Opened a network connection before the user asked for the app.
        case network
        /// Opened user data or credentials (under `$HOME`, `~/.ssh`, keyrings).
        case userData
        /// Started a thread, which the freeze stops at an arbitrary point.
        case thread
        /// Drew randomness: a note for a spawned process (each draws its own); it would matter
        /// only to a fork-from-a-template model, whose children would share the seed.
        case randomness
        /// Took a file lock, held for the whole hold.
        case fileLock
    }

    public var kind: Kind
    /// The system call, or the vDSO or libc clock function (`clock_gettime`, `connect`, …).
    public var syscall: String
    /// A useful argument: the clock, the address, the path, the lock command.
    public var detail: String
    /// The executable or shared object holding `function` (file name).
    public var object: String
    /// The function that made the call: from `.symtab`, else `.dynsym`, else `object+0xoffset`.
    public var function: String
    public var severity: Severity
    /// Why it is a hazard or only a note, in a sentence.
    public var why: String

    public init(
        kind: Kind, syscall: String, detail: String, object: String, function: String,
        severity: Severity? = nil, why: String? = nil
    ) {
        self.severity = severity ?? (kind == .randomness ? .note : .hazard)
        self.why = why ?? kind.why
        self.kind = kind
        self.syscall = syscall
        self.detail = detail
        self.object = object
        self.function = function
    }

    private enum CodingKeys: String, CodingKey {
        case kind, syscall, detail, object, function, severity, why
    }

    /// Reports written before severities read as their kind's default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try container.decode(Kind.self, forKey: .kind), syscall: try container.decode(String.self, forKey: .syscall),
            detail: try container.decode(String.self, forKey: .detail), object: try container.decode(String.self, forKey: .object),
            function: try container.decode(String.self, forKey: .function),
            severity: try container.decodeIfPresent(Severity.self, forKey: .severity),
            why: try container.decodeIfPresent(String.self, forKey: .why))
    }

    /// No hazard among `hazards` (notes do not count).
    public static func prewarmSafe(_ hazards: [PrewarmHazard]) -> Bool {
        !hazards.contains { $0.severity == .hazard }
    }

    /// The note for a call the C library or a language runtime (`object`) made on its own behalf,
    /// with no frame of the app's code on the stack.
    public static func runtimeWhy(_ object: String) -> String {
        "\(object) made this call on its own behalf, with no function of the app's own on the stack: nothing the app's author can move"
    }
}

extension PrewarmHazard.Kind {
    /// Why this kind is a hazard (or, for randomness, a note).
    public var why: String {
        switch self {
        case .wallClock: "the time read before the hold is stale when the user launches the app"
        case .network: "a connection made before the user asked for the app: it may time out or be refused by the time the app is used"
        case .userData: "the user's data or credentials were read before the user asked for the app, and may change during the hold"
        case .thread: "the freeze stops the thread at an arbitrary point, perhaps holding a lock or halfway through its work"
        case .randomness: "a spawned process draws its own randomness, so prewarming shares no seed; it would be a hazard only if processes were forked from one prewarmed template"
        case .fileLock: "the lock stays held for the whole hold, blocking other processes that want it"
        }
    }
}
