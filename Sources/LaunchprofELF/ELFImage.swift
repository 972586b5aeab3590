#if canImport(Glibc)
import Glibc
#endif

/// One parsed 64-bit x86-64 ELF file: what the loader needs from it, immutable.
///
/// `read(path:)` maps the file (not copied) and decodes only what the reports and the tracer
/// use; symbol lookups later go through the still-mapped file.
public struct ELFImage: Sendable {
    /// The resolved path (symlinks followed).
    public let path: String
    /// The path as it was opened (what the loader records as the object's name).
    public let openedPath: String
    public let fileSize: UInt64
    /// Always "ELF64" (other classes are rejected).
    public let elfClass: String
    /// Always "x86-64" (other machines are rejected).
    public let machine: String
    public let kind: ELFKind
    /// PT_INTERP, when present.
    public let interpreter: String?
    /// NT_GNU_BUILD_ID in lowercase hex, as `readelf -n` prints it.
    public let buildID: String?
    /// e_entry (unrelocated).
    public let entry: UInt64
    public let dynamic: DynamicInfo
    public let relocations: RelocationCounts
    /// The first address the loader writes when relocating this object: the first DT_RELR
    /// address, else r_offset of the first DT_RELA/DT_REL entry, else of the first DT_JMPREL one.
    public let firstRelocationTarget: UInt64?
    /// PT_TLS memory size in bytes (0 without thread-local storage).
    public let tlsSize: UInt64
    /// Undefined dynamic symbols (what the object imports).
    public let importedSymbolCount: Int
    /// Defined global and weak dynamic symbols (what it exports).
    public let exportedSymbolCount: Int
    /// Device and inode: the loader treats two paths to the same file as one object.
    public let fileID: FileID

    public struct FileID: Sendable, Hashable {
        public var device: UInt64
        public var inode: UInt64
    }

    let backing: ELFBacking
    /// The loadable segments, to read the file's bytes at a virtual address.
    let segments: SegmentMap

    /// Whether the object has a dynamic section (a static program has none).
    public var isDynamic: Bool { backing.hasDynamic }

    /// No .symtab section (read from the section headers when first asked for).
    public var isStripped: Bool { backing.isStripped }

    /// Number of initializers the loader (or libc, for the program) runs: DT_INIT plus the
    /// entries of DT_PREINIT_ARRAY and DT_INIT_ARRAY.
    public var initializerCount: Int {
        (dynamic.initAddress == nil ? 0 : 1) + (dynamic.initArray?.count ?? 0)
            + (dynamic.preinitArray?.count ?? 0)
    }

    /// Number of finalizers: DT_FINI plus the entries of DT_FINI_ARRAY.
    public var finalizerCount: Int {
        (dynamic.finiAddress == nil ? 0 : 1) + (dynamic.finiArray?.count ?? 0)
    }

    /// The value of the defined symbol `name`: from .dynsym (through its hash table), else from
    /// .symtab (a table built once, on first use).
    public func symbolAddress(_ name: String) -> UInt64? {
        backing.symbolAddress(name)
    }

    /// Reads and decodes the ELF file at `path`.
    public static func read(path: String) throws(ELFError) -> ELFImage {
        try read(path: path, realPaths: RealPathCache())
    }

    static func read(path: String, realPaths: RealPathCache) throws(ELFError) -> ELFImage {
        let file = try ELFBacking.open(path)
        do {
            return try decode(file, path: path, realPath: realPaths.resolve(path))
        } catch {
            throw error.about(path)
        }
    }
}
