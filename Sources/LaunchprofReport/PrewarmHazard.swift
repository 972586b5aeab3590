/// Something pre-main code did during a prewarm that is unsafe before the user launches the app:
/// its result goes stale during the hold, or it acts for a user who has not asked yet.
public struct PrewarmHazard: Sendable, Equatable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// Read the wall clock: the time is stale after the hold.
        case wallClock
        /// Opened a network connection before the user asked for the app.
        case network
        /// Opened user data or credentials (under `$HOME`, `~/.ssh`, keyrings).
        case userData
        /// Started a thread, which the freeze stops at an arbitrary point.
        case thread
        /// Seeded randomness: every prewarmed process of a pool would share the seed's moment.
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

    public init(kind: Kind, syscall: String, detail: String, object: String, function: String) {
        self.kind = kind
        self.syscall = syscall
        self.detail = detail
        self.object = object
        self.function = function
    }
}
