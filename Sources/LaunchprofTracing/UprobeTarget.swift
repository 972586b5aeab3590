/// One launch boundary as a uprobe: a file, an offset in it, and what a hit there means.
public struct UprobeTarget: Sendable, Hashable {
    /// The file (a real path: the kernel probes its inode, in every mapping of it).
    public var path: String
    /// The probed file offset.
    public var offset: UInt64
    public var action: Boundary
    /// The kernel emulates the probed instruction (a cheap hit) instead of single-stepping it.
    public var emulated: Bool

    public init(path: String, offset: UInt64, action: Boundary, emulated: Bool) {
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

    /// A probe every dynamically linked process on the machine maps anyway — the loader's, libc's —
    /// which the holder keeps as long as it lives; the program's own go once no session uses them.
    public var isShared: Bool {
        switch action {
        case .relocationStart, .libcStartMain: return true
        case .objectInit: return path.split(separator: "/").last?.hasPrefix("libc.so") == true
        case .entry, .programInit, .main: return false
        }
    }
}
