import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The loader's list of loaded objects (`r_debug.r_map`, a chain of `struct link_map`), read
/// from the tracee once the list is complete (when relocation starts).
enum LinkMap {
    struct Object: Sendable {
        /// Where the node itself lies in the tracee.
        var address: UInt64
        /// `l_addr`: the difference between the object's addresses in memory and in its file.
        var bias: UInt64
        /// `l_ld − l_addr`: the object's dynamic section in its file, which identifies it.
        var dynamicOffset: UInt64
        /// `l_name`: where the loader keeps the object's name.
        var nameAddress: UInt64
        /// `l_name`: the path the loader opened ("" for the program).
        var name: String
        /// `name` resolved like the plan's keys (symlinks followed); nil for the program and
        /// the vDSO, which have no file of that name.
        var key: String?
    }

    // struct r_debug { int r_version; struct link_map *r_map; … }
    // struct link_map { l_addr; l_name; l_ld; l_next; l_prev; … }
    static let nodeWords = 4

    /// Walks the chain node by node. A node that holds the same object as the same node of
    /// `earlier` (a previous walk: same dynamic section offset) keeps that name, unread.
    static func read(_ pid: pid_t, rDebug: UInt64, earlier: [Object] = []) throws(TracerError) -> [Object] {
        var node = try Ptrace.readWord(pid, at: rDebug + 8)
        var objects: [Object] = []
        while node != 0, objects.count < 4096 {
            let words = try Ptrace.readBlocks(pid, at: [node], words: nodeWords)
            let dynamicOffset = words[2] &- words[0]
            if objects.count < earlier.count, earlier[objects.count].dynamicOffset == dynamicOffset {
                var known = earlier[objects.count]
                (known.address, known.bias, known.nameAddress) = (node, words[0], words[1])
                objects.append(known)
            } else {
                let name = words[1] == 0 ? "" : try readString(pid, at: words[1])
                objects.append(Object(
                    address: node, bias: words[0], dynamicOffset: dynamicOffset, nameAddress: words[1],
                    name: name, key: realPath(name)))
            }
            node = words[3]
        }
        return objects
    }

    /// Reads a NUL-terminated string without crossing into a page that may not be mapped.
    private static func readString(_ pid: pid_t, at address: UInt64) throws(TracerError) -> String {
        var bytes: [UInt8] = []
        var cursor = address
        while bytes.count < 4096 {
            let chunk = Int(4096 - cursor % 4096)
            let part = try Ptrace.read(pid, at: cursor, count: min(chunk, 256))
            if let end = part.firstIndex(of: 0) {
                bytes += part[..<end]
                break
            }
            bytes += part
            cursor += UInt64(part.count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let realPaths = Mutex<[String: String]>([:])

    /// The loader's name for an object, resolved like the plan's keys (symlinks followed),
    /// remembered across runs so later runs pay nothing.
    static func realPath(_ name: String) -> String? {
        guard name.hasPrefix("/") else { return nil }  // "linux-vdso.so.1": no file
        if let known = realPaths.withLock({ $0[name] }) { return known }
        guard let resolved = realpath(name, nil) else { return nil }
        defer { free(resolved) }
        let path = String(cString: resolved)
        realPaths.withLock { $0[name] = path }
        return path
    }
}
