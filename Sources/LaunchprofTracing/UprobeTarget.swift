/// One launch boundary as a uprobe: a file, an offset in it, and what a hit there means.
public struct UprobeTarget: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case relocationStart
        /// An object's first initializer; `path` is the object's name as the loader opens it.
        case objectInit(path: String)
        case entry
        case programInit
        case main
    }

    /// The file (a real path: the kernel probes its inode, in every mapping of it).
    public var path: String
    /// The probed file offset.
    public var offset: UInt64
    public var action: Action
    /// The kernel emulates the probed instruction (a cheap hit) instead of single-stepping it.
    public var emulated: Bool

    public init(path: String, offset: UInt64, action: Action, emulated: Bool) {
        self.path = path
        self.offset = offset
        self.action = action
        self.emulated = emulated
    }

    /// Probes are shared by file and offset (the loader's, libc's initializer across programs).
    public struct Key: Sendable, Hashable {
        public var path: String
        public var offset: UInt64
    }

    public var key: Key { Key(path: path, offset: offset) }
}
