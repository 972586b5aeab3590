import CElf
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The ELF header's fields and the program headers of one file, as plain values.
struct ELFHeaders {
    struct ProgramHeader {
        var type: UInt32
        var offset: UInt64
        var vaddr: UInt64
        var fileSize: UInt64
        var memorySize: UInt64
        var alignment: UInt64
    }

    struct SectionHeader {
        var type: UInt32
        var offset: UInt64
        var size: UInt64
        var link: UInt32
    }

    var type: UInt16
    var entry: UInt64
    var programHeaders: [ProgramHeader]
}

/// An open, mapped ELF file: the only place launchprof touches libelf and raw file memory.
/// It stays alive as long as any `ELFImage` made from it, so views into it stay valid.
///
/// The ELF and program headers are read from the mapped file directly (what the loader reads);
/// the section headers through libelf, when first asked for (`sections`): they sit at the end
/// of the file, and the loader's view of a library never needs them — on gdb's 58 libraries,
/// reading them anyway was a page fault and a libelf descriptor each, a tenth of `inspect`.
final class ELFBacking: @unchecked Sendable {
    // Set once while `ELFImage.decode` runs, before the backing is shared; afterwards only the
    // section state and `symtabIndex` change, under their mutexes.
    private let fd: Int32
    let bytes: UnsafeRawBufferPointer
    let fileID: ELFImage.FileID
    var hasDynamic = false
    /// .dynsym as byte ranges of the file, with its hash tables.
    var dynamicSymbols: SymbolTableLocation?
    /// libelf's descriptor and the section headers it read, once asked for.
    private let sectionState = Mutex<(elf: OpaquePointer?, sections: [ELFHeaders.SectionHeader]?)>((nil, nil))
    private let symtabIndex = Mutex<[String: UInt64]?>(nil)

    struct SymbolTableLocation {
        var symbols: Range<Int>
        var strings: Range<Int>
        var gnuHash: Range<Int>?
        var sysvHash: Range<Int>?
    }

    var view: ByteView { ByteView(bytes) }

    private init(fd: Int32, bytes: UnsafeRawBufferPointer, fileID: ELFImage.FileID) {
        self.fd = fd
        self.bytes = bytes
        self.fileID = fileID
    }

    deinit {
        sectionState.withLock { state in
            if let elf = state.elf { elf_end(elf) }
        }
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        close(fd)
    }

    /// Up to `count` bytes at file `offset`, read from the file with pread (code bytes: they must
    /// be the file's own, never a registered uprobe's int3 as a private mapping would show).
    func readBytes(offset: UInt64, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(count, 0))
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        return got > 0 ? Array(buffer[..<got]) : []
    }

    /// Opens `path`, classifies failures (missing, directory, empty, not ELF, wrong class or
    /// machine) and maps the file.
    static func open(_ path: String) throws(ELFError) -> ELFBacking {
        // What is there, before opening it: opening a FIFO waits for a writer, a device's open
        // may act. O_NONBLOCK as well, for what is put there between the two calls.
        // A path that is not there ends here: the resolver tries ~1,000 of them for a large
        // closure, and a second call on each cost as many allocations.
        var before = stat()
        if stat(path, &before) != 0 {
            if errno == ENOENT || errno == ENOTDIR { throw .notFound(path: path) }
        } else if let kind = specialKind(before.st_mode) {
            throw .notAFile(path: path, kind: kind)
        }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw .notFound(path: path)
            case EISDIR: throw .isDirectory(path: path)
            default: throw .unreadable(path: path, errno: code)
            }
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw .unreadable(path: path, errno: code)
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw .isDirectory(path: path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notAFile(path: path, kind: specialKind(status.st_mode) ?? "not a regular file")
        }
        guard status.st_size > 0 else {
            close(fd)
            throw .empty(path: path)
        }
        // Mapped shared, read-only (libelf is handed the same memory): the kernel installs registered
        // uprobes (other launchprof processes' observers on libc, ld.so, …) into every private
        // mapping of a file that could be executable, copying a page for each; a shared mapping
        // is exempt, and reads the file's own bytes.
        let size = Int(status.st_size)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else {
            let code = errno
            close(fd)
            throw .unreadable(path: path, errno: code)
        }
        // Check identity bytes ourselves: libelf would accept other classes and byte orders.
        // (Read from the mapping, whose first page the headers come from next: no read of its own.)
        let ident = UnsafeRawBufferPointer(start: mapping, count: min(size, 20))
        do throws(ELFError) {
            try checkIdentity(ident, path: path)
            guard status.st_size >= 64 else {
                throw ELFError.truncated(path: path, detail: "\(status.st_size)-byte file ends inside the 64-byte ELF header")
            }
        } catch {
            munmap(mapping, size)
            close(fd)
            throw error
        }
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(mapping), count: size)
        let fileID = ELFImage.FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        return ELFBacking(fd: fd, bytes: bytes, fileID: fileID)
    }

    /// "a FIFO", "a character device"… for what is neither a regular file nor a directory.
    private static func specialKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return nil
        }
    }

    private static func checkIdentity(_ ident: UnsafeRawBufferPointer, path: String) throws(ELFError) {
        let count = ident.count
        guard count >= 4, ident[0] == 0x7f, ident[1] == 0x45, ident[2] == 0x4c, ident[3] == 0x46 else {
            throw .notELF(path: path)
        }
        guard count >= 20 else {
            throw .truncated(path: path, detail: "\(count)-byte file ends inside the ELF header")
        }
        switch ident[4] {
        case 2: break
        case 1: throw .unsupportedClass(path: path, elfClass: "32-bit")
        default: throw .malformed(path: path, detail: "unknown ELF class \(ident[4])")
        }
        guard ident[5] == 1 else {
            throw .unsupportedMachine(path: path, machine: ident[5] == 2 ? "a big-endian machine" : "an unknown byte order")
        }
        let machine = UInt16(ident[18]) | UInt16(ident[19]) << 8
        guard machine == 62 else {
            throw .unsupportedMachine(path: path, machine: machineName(machine))
        }
    }

    private static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 3: return "i386"
        case 40: return "ARM"
        case 183: return "AArch64"
        case 243: return "RISC-V"
        case 8: return "MIPS"
        case 20, 21: return "PowerPC"
        case 22: return "s390"
        default: return "machine \(machine)"
        }
    }

    /// Whether the section header table lies within the file (`headers` decides): one that does
    /// not is no reason to refuse a program — the kernel never reads it — so the file is read
    /// as having no sections (no .symtab), and libelf is never handed it.
    private(set) var sectionTableInFile = true

    /// The ELF header's fields and the program headers, read from the file (64-bit,
    /// little-endian: checked when it was opened), refused where the kernel's execve refuses
    /// them (ENOEXEC: another type, no program headers, entries not 56 bytes, more than 64 KiB
    /// of them). Offsets are checked without overflow.
    func headers(path: String) throws(ELFError) -> ELFHeaders {
        guard bytes.count >= 64 else {
            throw .truncated(path: path, detail: "\(bytes.count)-byte file ends inside the ELF header")
        }
        let view = self.view
        let type = try view.u16(16)
        let programOffset = try view.u64(32)
        let sectionOffset = try view.u64(40)
        let programEntrySize = try view.u16(54)
        let programCount = Int(try view.u16(56))
        let sectionEntrySize = UInt64(try view.u16(58))
        let sectionCount = max(UInt64(try view.u16(60)), sectionOffset == 0 ? 0 : 1)
        let fileSize = UInt64(bytes.count)
        // Each bound as a subtraction from the file's size: no sum can wrap.
        sectionTableInFile = sectionOffset == 0
            || (sectionEntrySize >= 64 && sectionOffset <= fileSize && sectionCount <= (fileSize - sectionOffset) / sectionEntrySize)
        let refused = " (the kernel refuses to run it: Exec format error)"
        guard type == 2 || type == 3 else {
            throw .malformed(path: path, detail: "ELF type \(type) is neither a program nor a shared object" + refused)
        }
        guard programCount > 0 else { throw .malformed(path: path, detail: "no program headers" + refused) }
        guard programEntrySize == 56 else {
            throw .malformed(path: path, detail: "program header entries of \(programEntrySize) bytes (64-bit ones are 56)" + refused)
        }
        // The kernel reads at most 64 KiB of program headers (so e_phnum 0xffff, PN_XNUM, too).
        guard programCount * 56 <= 65536 else {
            throw .malformed(path: path, detail: "\(programCount) program headers, more than 64 KiB" + refused)
        }
        guard programOffset <= fileSize, UInt64(programCount) * 56 <= fileSize - programOffset else {
            throw .truncated(path: path, detail: "\(programCount) program headers at byte \(programOffset) of a \(fileSize)-byte file")
        }
        var programHeaders: [ELFHeaders.ProgramHeader] = []
        programHeaders.reserveCapacity(programCount)
        for index in 0..<programCount {
            let entry = Int(programOffset) + index * 56
            programHeaders.append(
                .init(
                    type: try view.u32(entry), offset: try view.u64(entry + 8), vaddr: try view.u64(entry + 16),
                    fileSize: try view.u64(entry + 32), memorySize: try view.u64(entry + 40),
                    alignment: try view.u64(entry + 48)))
        }
        return ELFHeaders(type: type, entry: try view.u64(24), programHeaders: programHeaders)
    }

    /// The section headers, through libelf, read when first asked for; none when libelf cannot
    /// read them. Index 0 is the null section, which libelf's iteration skips: indices match
    /// the file's.
    func sections() -> [ELFHeaders.SectionHeader] {
        sectionState.withLock { state in
            if let sections = state.sections { return sections }
            var sections = [ELFHeaders.SectionHeader(type: 0, offset: 0, size: 0, link: 0)]
            _ = elf_version(UInt32(EV_CURRENT))
            // libelf reads a native-endian image in place: it never writes to it.
            if sectionTableInFile, let base = bytes.baseAddress,
                let elf = elf_memory(UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), bytes.count)
            {
                state.elf = elf
                var section = elf_nextscn(elf, nil)
                while let current = section {
                    var entry = GElf_Shdr()
                    if gelf_getshdr(current, &entry) != nil {
                        sections.append(
                            .init(type: entry.sh_type, offset: entry.sh_offset, size: entry.sh_size, link: entry.sh_link))
                    }
                    section = elf_nextscn(elf, current)
                }
            }
            state.sections = sections
            return sections
        }
    }

    /// Whether the file has no .symtab.
    var isStripped: Bool { !sections().contains { $0.type == Self.shtSymtab } }

    /// .symtab and its string table as byte ranges of the file, when it has them.
    var staticSymbols: SymbolTableLocation? { symbolSection(type: Self.shtSymtab) }

    /// The first section of `type` (.symtab, .dynsym) and its string table as byte ranges of the
    /// file, when both lie within it.
    func symbolSection(type: UInt32) -> SymbolTableLocation? {
        let sections = sections()
        guard let symbols = sections.first(where: { $0.type == type }), Int(symbols.link) < sections.count
        else { return nil }
        let strings = sections[Int(symbols.link)]
        guard view.contains(offset: symbols.offset, length: symbols.size),
            view.contains(offset: strings.offset, length: strings.size)
        else { return nil }
        return .init(
            symbols: Int(symbols.offset)..<Int(symbols.offset + symbols.size),
            strings: Int(strings.offset)..<Int(strings.offset + strings.size))
    }

    static let shtSymtab: UInt32 = 2
    static let shtDynsym: UInt32 = 11

    func symbolAddress(_ name: String) -> UInt64? {
        if let dynamicSymbols, let table = symbolTable(dynamicSymbols),
            let value = (try? table.lookup(name)) ?? nil
        {
            return value
        }
        guard let staticSymbols else { return nil }
        return symtabIndex.withLock { index in
            if index == nil {
                index = buildIndex(staticSymbols)
            }
            return index?[name]
        }
    }

    func symbolTable(_ location: SymbolTableLocation) -> SymbolTable? {
        func slice(_ range: Range<Int>) -> ByteView {
            ByteView(UnsafeRawBufferPointer(rebasing: bytes[range]))
        }
        return SymbolTable(
            symbols: slice(location.symbols), strings: slice(location.strings),
            gnuHash: location.gnuHash.map(slice), sysvHash: location.sysvHash.map(slice))
    }

    private func buildIndex(_ location: SymbolTableLocation) -> [String: UInt64] {
        var index: [String: UInt64] = [:]
        guard let table = symbolTable(location) else { return index }
        index.reserveCapacity(table.count)
        var globals = Set<String>()
        try? table.forEachDefined { name, value, isGlobal in
            // A global definition wins over a local one of the same name.
            if isGlobal {
                if globals.insert(name).inserted { index[name] = value }
            } else if index[name] == nil {
                index[name] = value
            }
        }
        return index
    }
}
