import CLaunchprof
import LaunchprofELF
import LaunchprofReport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Names the frames of a stack with launchprof's own ELF readers (`ObjectSymbols`): the
/// function from `.symtab`, a separate debug file found by build-id, or `.dynsym`; C++ names
/// demangled by the C++ ABI's `__cxa_demangle`, Swift names by the Swift runtime's
/// `swift_demangle`; frames without a symbol as `object+0xoffset`. Objects are read once and
/// kept for the life of the symbolizer (a session), so later launches name frames at once.
public final class StackSymbolizer: @unchecked Sendable {
    /// A file-backed mapping of the process the stack came from.
    public struct Mapping: Sendable, Equatable {
        public var start: UInt64
        public var end: UInt64
        /// The file offset mapped at `start`.
        public var offset: UInt64
        public var path: String

        public init(start: UInt64, end: UInt64, offset: UInt64, path: String) {
            self.start = start
            self.end = end
            self.offset = offset
            self.path = path
        }
    }

    /// A mapping with its object read and its load bias known.
    public struct LoadedMapping: Sendable {
        public var mapping: Mapping
        public var symbols: ObjectSymbols?
        /// Process address minus the object's own (unrelocated) address.
        public var bias: UInt64
        public var name: String
        public var isSystem: Bool
    }

    private let state = Mutex<(objects: [String: ObjectSymbols?], names: [String: String])>(([:], [:]))
    private let debugRoot: String

    public init(debugRoot: String = "/usr/lib/debug") {
        self.debugRoot = debugRoot
    }

    /// Reads (once) the object at `path`; nil when it is not a readable ELF file.
    public func symbols(for path: String) -> ObjectSymbols? {
        if let cached = state.withLock({ $0.objects[path] }) { return cached }
        let loaded = path == "[vdso]" ? Self.vdso() : try? ObjectSymbols.load(path: path, debugRoot: debugRoot)
        state.withLock { $0.objects[path] = loaded }
        return loaded
    }

    public func load(_ mapping: Mapping) -> LoadedMapping {
        let symbols = symbols(for: mapping.path)
        let vaddr = symbols?.virtualAddress(ofFileOffset: mapping.offset) ?? mapping.offset
        let name = mapping.path.split(separator: "/").last.map(String.init) ?? mapping.path
        return LoadedMapping(
            mapping: mapping, symbols: symbols, bias: mapping.start &- vaddr, name: name,
            isSystem: Self.isSystemObject(name))
    }

    /// The C library, the loader, the vDSO and the language runtimes (by file name): work seen in
    /// them is blamed on the caller.
    public static func isSystemObject(_ name: String) -> Bool {
        name.hasPrefix("[") || ["libc.so", "ld-linux", "libpthread", "libdl.so", "librt.so", "libm.so", "libgcc_s", "libstdc++",
         "libswift", "libdispatch", "libFoundation"].contains { name.hasPrefix($0) }
    }

    /// Names `address` in `loaded` (nil: no mapping holds it). A return address (every frame
    /// but the innermost) is looked up one byte back, inside the call.
    public func frame(_ address: UInt64, in loaded: LoadedMapping?, isReturnAddress: Bool) -> SampledFrame {
        guard let loaded else {
            return SampledFrame(function: nil, object: "?", address: address, offset: address, isSystem: true)
        }
        let vaddr = address &- loaded.bias
        let lookup = isReturnAddress ? vaddr &- 1 : vaddr
        let function = loaded.symbols?.function(containing: lookup)
        return SampledFrame(
            function: function.map { demangle($0.name) }, object: loaded.name,
            buildID: loaded.symbols?.buildID ?? "", address: address, offset: vaddr, isSystem: loaded.isSystem,
            functionStart: function == nil ? loaded.symbols?.cfiFunctionStart(containing: lookup) : nil)
    }

    /// A C++ or Swift symbol demangled; other names as they are.
    public func demangle(_ name: String) -> String {
        let isCxx = name.hasPrefix("_Z")
        let isSwift = name.hasPrefix("$s") || name.hasPrefix("_$s") || name.hasPrefix("$S") || name.hasPrefix("_T0")
        guard isCxx || isSwift else { return name }
        if let known = state.withLock({ $0.names[name] }) { return known }
        var result = name
        if let raw = isCxx ? lp_demangle_cxx(name) : lp_demangle_swift(name) {
            result = String(cString: raw)
            free(raw)
        }
        state.withLock { $0.names[name] = result }
        return result
    }

    /// The frames of a crash stack named against the process's mappings, innermost first:
    /// `function (object+0xoffset)`, or `object+0xoffset` without a symbol.
    public func frameNames(_ stack: [UInt64], mappings: [Mapping], limit: Int = 16) -> [String] {
        var loaded: [String: LoadedMapping] = [:]
        return stack.prefix(limit).enumerated().map { index, address in
            guard let mapping = mappings.first(where: { $0.start <= address && address < $0.end }) else {
                return "0x" + String(address, radix: 16)
            }
            let key = "\(mapping.start)"
            let object = loaded[key] ?? load(mapping)
            loaded[key] = object
            let frame = frame(address, in: object, isReturnAddress: index > 0)
            let place = "\(frame.object)+0x" + String(frame.offset, radix: 16)
            return frame.function.map { "\($0) (\(place))" } ?? place
        }
    }

    /// The vDSO has no file, but every process of this kernel maps the same one: launchprof's
    /// own, copied to a file it reads and then removes, gives the unwinder its call frame
    /// information (the clock functions the kernel runs in user space).
    private static func vdso() -> ObjectSymbols? {
        let base = lp_vdso_base()
        guard base != 0, let range = ProcessMappings.range(of: "[vdso]", in: getpid()), range.lowerBound == base,
            let pointer = UnsafeRawPointer(bitPattern: UInt(base))
        else { return nil }
        let directory = String(cString: getenv("TMPDIR") ?? strdup("/tmp"))
        let path = "\(directory)/launchprof-vdso-\(getpid()).so"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        let length = Int(range.upperBound - range.lowerBound)
        let written = write(fd, pointer, length)
        close(fd)
        defer { unlink(path) }
        guard written == length else { return nil }
        return try? ObjectSymbols.load(path: path)  // mapped: stays readable once unlinked
    }

    /// Shared by crash reports (objects are read once per process).
    public static let shared = StackSymbolizer()

    public static func frameNames(_ stack: [UInt64], mappings: [Mapping], limit: Int = 16) -> [String] {
        shared.frameNames(stack, mappings: mappings, limit: limit)
    }
}
