#if canImport(Glibc)
    import Glibc
#endif

/// What `stat` says about a path, or that nothing is there.
struct FileState: Equatable {
    var exists: Bool
    var device: UInt64 = 0
    var inode: UInt64 = 0
    var size: Int64 = 0
    var modifiedNs: Int64 = 0
    var changedNs: Int64 = 0

    /// nil when the path cannot be examined (permissions, I/O): nothing can be promised then.
    static func current(_ path: String) -> FileState? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return errno == ENOENT || errno == ENOTDIR ? FileState(exists: false) : nil
        }
        return FileState(
            exists: true, device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modifiedNs: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
            changedNs: Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec))
    }

    /// "-" for absent, else the five numbers.
    var text: String {
        exists ? "\(device) \(inode) \(size) \(modifiedNs) \(changedNs)" : "-"
    }

    init(exists: Bool, device: UInt64 = 0, inode: UInt64 = 0, size: Int64 = 0, modifiedNs: Int64 = 0, changedNs: Int64 = 0) {
        self.exists = exists
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNs = modifiedNs
        self.changedNs = changedNs
    }

    init?(text: Substring) {
        if text == "-" {
            self.init(exists: false)
            return
        }
        let fields = text.split(separator: " ")
        guard fields.count == 5, let device = UInt64(fields[0]), let inode = UInt64(fields[1]),
            let size = Int64(fields[2]), let modified = Int64(fields[3]), let changed = Int64(fields[4])
        else { return nil }
        self.init(exists: true, device: device, inode: inode, size: size, modifiedNs: modified, changedNs: changed)
    }
}
