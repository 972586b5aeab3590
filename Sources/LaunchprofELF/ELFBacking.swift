import CElf
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The program and section headers of one file, as plain values (read through libelf).
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
    var sections: [SectionHeader]
}

/// An open, mapped ELF file: the only place launchprof touches libelf and raw file memory.
/// It stays alive as long as any `ELFImage` made from it, so views into it stay valid.
final class ELFBacking: @unchecked Sendable {
    // Set once while `ELFImage.decode` runs, before the backing is shared; afterwards only
    // `symtabIndex` changes, under its mutex.
    private let fd: Int32
    private let elf: OpaquePointer
    let bytes: UnsafeRawBufferPointer
    let fileID: ELFImage.FileID
    var hasDynamic = false
    /// .dynsym and .symtab as byte ranges of the file, with their hash tables.
    var dynamicSymbols: SymbolTableLocation?
    var staticSymbols: SymbolTableLocation?
    private let symtabIndex = Mutex<[String: UInt64]?>(nil)

    struct SymbolTableLocation {
        var symbols: Range<Int>
        var strings: Range<Int>
        var gnuHash: Range<Int>?
        var sysvHash: Range<Int>?
    }

    var view: ByteView { ByteView(bytes) }

    private init(fd: Int32, elf: OpaquePointer, bytes: UnsafeRawBufferPointer, fileID: ELFImage.FileID) {
        self.fd = fd
        self.elf = elf
        self.bytes = bytes
        self.fileID = fileID
    }

    deinit {
        elf_end(elf)
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
    /// machine) and maps the file through libelf.
    static func open(_ path: String) throws(ELFError) -> ELFBacking {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
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
            throw .notELF(path: path)
        }
        guard status.st_size > 0 else {
            close(fd)
            throw .empty(path: path)
        }
        // Check identity bytes ourselves: libelf would accept other classes and byte orders.
        var ident = [UInt8](repeating: 0, count: 20)
        let got = ident.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 20, 0) }
        do throws(ELFError) {
            try checkIdentity(ident, count: got, path: path)
            guard status.st_size >= 64 else {
                throw ELFError.truncated(path: path, detail: "\(status.st_size)-byte file ends inside the 64-byte ELF header")
            }
        } catch {
            close(fd)
            throw error
        }
        // Mapped shared, read-only, and handed to libelf as memory: the kernel installs registered
        // uprobes (other launchprof processes' observers on libc, ld.so, …) into every private
        // mapping of a file that could be executable, copying a page for each; a shared mapping
        // is exempt, and reads the file's own bytes.
        let size = Int(status.st_size)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else {
            let code = errno
            close(fd)
            throw .unreadable(path: path, errno: code)
        }
        _ = elf_version(UInt32(EV_CURRENT))
        // libelf reads a native-endian (checked above) image in place: it never writes to it.
        guard let elf = elf_memory(mapping.assumingMemoryBound(to: CChar.self), size) else {
            munmap(mapping, size)
            close(fd)
            throw .malformed(path: path, detail: libelfMessage())
        }
        guard elf_kind(elf) == ELF_K_ELF else {
            elf_end(elf)
            munmap(mapping, size)
            close(fd)
            throw .notELF(path: path)
        }
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(mapping), count: size)
        let fileID = ELFImage.FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        return ELFBacking(fd: fd, elf: elf, bytes: bytes, fileID: fileID)
    }

    private static func checkIdentity(_ ident: [UInt8], count: Int, path: String) throws(ELFError) {
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

    private static func libelfMessage() -> String {
        guard let message = elf_errmsg(-1) else { return "libelf could not read it" }
        return String(cString: message)
    }

    /// The ELF, program and section headers, through libelf.
    func headers(path: String) throws(ELFError) -> ELFHeaders {
        guard bytes.count >= 64 else {
            throw .truncated(path: path, detail: "\(bytes.count)-byte file ends inside the ELF header")
        }
        var header = GElf_Ehdr()
        guard gelf_getehdr(elf, &header) != nil else {
            throw .malformed(path: path, detail: ELFBacking.libelfMessage())
        }
        // Section headers sit at the end: a file cut before them lost its tail.
        let sectionCount = max(UInt64(header.e_shnum), header.e_shoff == 0 ? 0 : 1)
        let sectionTableEnd = header.e_shoff &+ sectionCount &* UInt64(header.e_shentsize)
        guard header.e_shoff == 0 || (sectionTableEnd >= header.e_shoff && sectionTableEnd <= UInt64(bytes.count)) else {
            throw .truncated(
                path: path, detail: "section headers end at byte \(sectionTableEnd) of \(bytes.count)")
        }
        var programHeaderCount = 0
        guard elf_getphdrnum(elf, &programHeaderCount) == 0 else {
            throw .truncated(path: path, detail: "program headers: \(ELFBacking.libelfMessage())")
        }
        var programHeaders: [ELFHeaders.ProgramHeader] = []
        programHeaders.reserveCapacity(programHeaderCount)
        for index in 0..<programHeaderCount {
            var entry = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(index), &entry) != nil else {
                throw .truncated(path: path, detail: "program header \(index): \(ELFBacking.libelfMessage())")
            }
            programHeaders.append(
                .init(
                    type: entry.p_type, offset: entry.p_offset, vaddr: entry.p_vaddr, fileSize: entry.p_filesz,
                    memorySize: entry.p_memsz, alignment: entry.p_align))
        }
        // Index 0 is the null section, which libelf's iteration skips: keep indices aligned.
        var sections = [ELFHeaders.SectionHeader(type: 0, offset: 0, size: 0, link: 0)]
        var section = elf_nextscn(elf, nil)
        while let current = section {
            var entry = GElf_Shdr()
            if gelf_getshdr(current, &entry) != nil {
                sections.append(.init(type: entry.sh_type, offset: entry.sh_offset, size: entry.sh_size, link: entry.sh_link))
            }
            section = elf_nextscn(elf, current)
        }
        return ELFHeaders(type: header.e_type, entry: header.e_entry, programHeaders: programHeaders, sections: sections)
    }

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
