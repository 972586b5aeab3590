/// What an object's `.dynamic` section tells the loader: dependencies, search paths, binding,
/// hash tables, initializers and where its relocation tables are.
public struct DynamicInfo: Sendable, Equatable {
    /// An array of function pointers (DT_INIT_ARRAY and friends): its address and entry count.
    public struct AddressArray: Sendable, Equatable {
        public var vaddr: UInt64
        public var count: Int
    }

    /// DT_NEEDED names, in the order the loader processes them.
    public var needed: [String] = []
    public var soname: String?
    /// DT_RPATH, raw (`:`-separated, dynamic string tokens unexpanded). The loader ignores it
    /// when DT_RUNPATH is present.
    public var rpath: String?
    /// DT_RUNPATH, raw.
    public var runpath: String?
    /// DT_FLAGS and DT_FLAGS_1.
    public var flags: UInt64 = 0
    public var flags1: UInt64 = 0
    /// DT_BIND_NOW, DF_BIND_NOW or DF_1_NOW: the loader binds every PLT slot at start-up.
    public var bindNow = false
    public var hasGNUHash = false
    public var hasSysVHash = false
    public var initAddress: UInt64?
    public var finiAddress: UInt64?
    public var initArray: AddressArray?
    public var preinitArray: AddressArray?
    public var finiArray: AddressArray?
    /// DT_SYMBOLIC or DF_SYMBOLIC: the object's own definitions come first in its lookups.
    public var symbolic = false
    /// DT_PLTGOT: the object's GOT.
    public var pltGOT: UInt64?
    /// DT_RELACOUNT + DT_RELCOUNT: the leading relative entries of DT_RELA and DT_REL (what
    /// LD_DEBUG=statistics sums as "relative relocations").
    public var relativeCountHint: UInt64 { relaCount &+ relCount }
    var relaCount: UInt64 = 0
    var relCount: UInt64 = 0

    // Table locations (virtual addresses and sizes in bytes).
    var strtab: UInt64?
    var strsz: UInt64 = 0
    var symtab: UInt64?
    var syment: UInt64 = 24
    var gnuHash: UInt64?
    var sysvHash: UInt64?
    var rela: UInt64?
    var relasz: UInt64 = 0
    var relaent: UInt64 = 24
    var rel: UInt64?
    var relsz: UInt64 = 0
    var relent: UInt64 = 16
    var relr: UInt64?
    var relrsz: UInt64 = 0
    var relrent: UInt64 = 8
    var jmprel: UInt64?
    var pltrelsz: UInt64 = 0
    /// DT_VERNEED / DT_VERNEEDNUM: the version requirements the loader checks at start-up.
    var verneed: UInt64?
    var verneedNum: UInt64 = 0
    /// DT_VERSYM: one version index per .dynsym entry.
    var versym: UInt64?
    /// DT_PLTREL: DT_RELA (7) or DT_REL (17).
    var pltrel: UInt64 = 7

    public init() {}

    /// DF_1_PIE: the linker marked the object a position-independent executable.
    public var isPIE: Bool { flags1 & 0x0800_0000 != 0 }
    /// DF_1_NODEFLIB: the loader skips the cache and default directories for its dependencies.
    public var noDefaultLibraries: Bool { flags1 & 0x800 != 0 }
    /// Whether relative relocations are packed in a DT_RELR table.
    public var hasRELR: Bool { relr != nil }
    /// The search path the loader honours: RUNPATH wins over RPATH.
    public var effectiveRPath: String? { runpath == nil ? rpath : nil }
}
