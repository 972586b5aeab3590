import LaunchprofSystem
import LaunchprofTracing
#if canImport(Glibc)
    import Glibc
#endif

/// Writes and builds, with the system C compiler, synthetic programs whose closures exercise
/// one kind of loader work each: many libraries, relative or symbolic relocations, lookups
/// through a deep scope, relocations spread over many pages, constructors. Each program exits 0
/// only if the code it was built to exercise really ran, so a broken build cannot pass for a
/// measurement. Used by `launchprof calibrate` and by the scaling study (`Benchmarks/`).
///
/// Programs are built once under `directory` and reused while they exist.
public struct ProgramGenerator: Sendable {
    public let directory: String
    public var compiler: String

    public init(directory: String, compiler: String = "/usr/bin/cc") throws(CalibrationError) {
        self.directory = directory
        self.compiler = compiler
        guard access(compiler, X_OK) == 0 else { throw .compilerMissing(path: compiler) }
        try Self.makeDirectory(directory)
    }

    // MARK: Libraries: main calls one function in each of `count` libraries.

    /// A program needing `count` tiny libraries (liblpscale0 … liblpscaleN-1).
    public func libraries(_ count: Int) throws(CalibrationError) -> String {
        let folder = try fillerLibraries(count)
        let output = "\(folder)/libraries-\(count)"
        guard !exists(output) else { return output }
        var text = (0..<count).map { "int lp_scale_\($0)(void);\n" }.joined()
        text += "int main(void) {\n    int sum = 0;\n"
        text += (0..<count).map { "    sum += lp_scale_\($0)();\n" }.joined()
        let expected = (0..<count).reduce(0) { $0 + $1 % 7 }
        text += "    return sum == \(expected) ? 0 : 1;\n}\n"
        try write(text, to: output + ".c")
        try build(
            [compiler, "-O1", "-o", output, output + ".c", "-L", folder, "-Wl,-rpath,\(folder)", "-Wl,--no-as-needed"]
                + (0..<count).map { "-llpscale\($0)" }, output: output)
        return output
    }

    /// Builds liblpscale0 … liblpscale(count-1) in the shared `libraries` folder.
    private func fillerLibraries(_ count: Int) throws(CalibrationError) -> String {
        let folder = try subfolder("libraries")
        for index in 0..<count where !exists("\(folder)/liblpscale\(index).so") {
            let source = "\(folder)/lpscale\(index).c"
            try write("int lp_scale_\(index)(void) { return \(index % 7); }\n", to: source)
            try build([compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpscale\(index).so", source],
                      output: "\(folder)/liblpscale\(index).so")
        }
        return folder
    }

    // MARK: Relocations: a table of `count` pointers in a library.
    // Relative: pointers to the library's own static array (R_X86_64_RELATIVE).
    // Symbolic: pointers to 1,024 symbols another library exports (R_X86_64_64, one symbol
    // lookup each; consecutive entries name different symbols, so glibc's one-entry lookup
    // cache never answers).

    public static let symbolCount = 1_024

    /// A program whose library holds `count` relative or symbolic relocations.
    public func relocations(_ count: Int, symbolic: Bool) throws(CalibrationError) -> String {
        try table(count, symbolic: symbolic, fillers: 0, stride: 1, name: symbolic ? "symbolic-\(count)" : "relative-\(count)")
    }

    /// A program whose library holds `lookups` symbolic relocations against 1,024 symbols, each
    /// lookup searching `fillers` tiny libraries before the definer (the fillers come first in the
    /// global scope). The linker sorts the relocations by symbol: glibc's cache answers repeats.
    public func scopeWalk(lookups: Int, fillers: Int) throws(CalibrationError) -> String {
        try table(lookups, symbolic: true, fillers: fillers, stride: 1, name: "scope-\(lookups)-\(fillers)")
    }

    /// A program whose library holds `count` relative relocations, each on its own page.
    public func spreadPages(_ count: Int) throws(CalibrationError) -> String {
        try table(count, symbolic: false, fillers: 0, stride: 512, name: "pages-\(count)")
    }

    private func table(_ count: Int, symbolic: Bool, fillers: Int, stride: Int, name: String) throws(CalibrationError)
        -> String
    {
        let folder = try subfolder(name)
        let output = "\(folder)/\(name)"
        guard !exists(output) else { return output }
        let libraries = fillers > 0 ? try fillerLibraries(fillers) : folder
        var library = ""
        if symbolic {
            let symbols = (0..<Self.symbolCount).map { "int lp_sym_\($0) = \($0);\n" }.joined()
            try write(symbols, to: "\(folder)/lpsyms.c")
            try build([compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpsyms.so", "\(folder)/lpsyms.c"],
                      output: "\(folder)/liblpsyms.so")
            library += (0..<Self.symbolCount).map { "extern int lp_sym_\($0);\n" }.joined()
        } else {
            library += "static int lp_targets[\(Self.symbolCount)] = {1};\n"
        }
        // `stride` pointers per entry: 512 × 8 bytes puts each relocated pointer on its own page.
        library += "void *lp_table[\(count)][\(stride)] = {\n"
        var entries: [String] = []
        entries.reserveCapacity(count)
        for index in 0..<count {
            let slot = index % Self.symbolCount
            entries.append(symbolic ? "{&lp_sym_\(slot)}" : "{&lp_targets[\(slot)]}")
        }
        library += entries.joined(separator: ",\n") + "\n};\n"
        // Reading the table through a function keeps the executable from copy-relocating it.
        library += "int lp_table_check(void) { return lp_table[0][0] != 0 && lp_table[\(count - 1)][0] != 0; }\n"
        try write(library, to: "\(folder)/lptable.c")
        var link = [compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblptable.so", "\(folder)/lptable.c"]
        if symbolic { link += ["-L", folder, "-llpsyms", "-Wl,-rpath,\(folder)"] }
        try build(link, output: "\(folder)/liblptable.so")
        // The fillers come first on the link line, so first in the scope after the program.
        var text = (0..<fillers).map { "int lp_scale_\($0)(void);\n" }.joined()
        text += "int lp_table_check(void);\nint main(void) {\n    int sum = 0;\n"
        text += (0..<fillers).map { "    sum += lp_scale_\($0)();\n" }.joined()
        let expected = (0..<fillers).reduce(0) { $0 + $1 % 7 }
        text += "    return lp_table_check() && sum == \(expected) ? 0 : 1;\n}\n"
        try write(text, to: output + ".c")
        try build(
            [compiler, "-O1", "-o", output, output + ".c", "-Wl,--no-as-needed", "-L", libraries]
                + (0..<fillers).map { "-llpscale\($0)" }
                + ["-L", folder, "-llptable", "-Wl,-rpath,\(folder)", "-Wl,-rpath,\(libraries)"], output: output)
        return output
    }

    // MARK: A million relative relocations, as in a browser's or a compiler's closure.

    /// A program whose library holds `count` relative relocations packed on consecutive pages
    /// (24 bytes of RELA each, read as the loader goes). The table is written in assembly
    /// (`.rept`): a million initialisers in C would cost the compiler minutes.
    public func packedRelocations(_ count: Int) throws(CalibrationError) -> String {
        let name = "packed-\(count)"
        let folder = try subfolder(name)
        let output = "\(folder)/\(name)"
        guard !exists(output) else { return output }
        // A hidden target: the linker turns each `.quad` into R_X86_64_RELATIVE.
        try write(
            """
            __attribute__((visibility("hidden"))) int lp_targets[16] = {1};
            extern void *lp_table[];
            int lp_table_check(void) { return lp_table[0] == lp_targets && lp_table[\(count - 1)] == lp_targets; }

            """, to: "\(folder)/lptable.c")
        try write(
            """
                .section .data.rel,"aw"
                .globl lp_table
                .type lp_table, @object
                .p2align 3
            lp_table:
                .rept \(count)
                .quad lp_targets
                .endr
                .size lp_table, \(count * 8)
                .section .note.GNU-stack,"",@progbits

            """, to: "\(folder)/lptable.s")
        try build(
            [compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblptable.so", "\(folder)/lptable.c", "\(folder)/lptable.s"],
            output: "\(folder)/liblptable.so")
        try write("int lp_table_check(void);\nint main(void) { return lp_table_check() ? 0 : 1; }\n", to: output + ".c")
        try build([compiler, "-O1", "-o", output, output + ".c", "-L", folder, "-llptable", "-Wl,-rpath,\(folder)"],
                  output: output)
        return output
    }

    // MARK: A large symbol table, read densely, as node's or Foundation's.

    /// A program whose library looks up `lookups` of the `symbols` another library exports,
    /// evenly spread: the lookups read most pages of a table of megabytes (a few per 64 KiB
    /// fault-around window), where the system programs' lookups read a page or two of each of
    /// many small tables.
    public func largeSymbolTable(symbols: Int, lookups: Int) throws(CalibrationError) -> String {
        let name = "symtab-\(symbols)-\(lookups)"
        let folder = try subfolder(name)
        let output = "\(folder)/\(name)"
        guard !exists(output) else { return output }
        try write((0..<symbols).map { "int lp_big_\($0) = \($0);\n" }.joined(), to: "\(folder)/lpbig.c")
        try build([compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpbig.so", "\(folder)/lpbig.c"],
                  output: "\(folder)/liblpbig.so")
        let step = max(1, symbols / max(lookups, 1))
        let used = Array(stride(from: 0, to: symbols, by: step).prefix(lookups))
        var user = used.map { "extern int lp_big_\($0);\n" }.joined()
        user += "void *lp_refs[] = {\n" + used.map { "&lp_big_\($0)" }.joined(separator: ",\n") + "\n};\n"
        let last = used.last ?? 0
        user += "int lp_refs_check(void) { return lp_refs[0] != 0 && *(int *)lp_refs[\(used.count - 1)] == \(last); }\n"
        try write(user, to: "\(folder)/lpuse.c")
        try build(
            [compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpuse.so", "\(folder)/lpuse.c", "-L", folder, "-llpbig",
             "-Wl,-rpath,\(folder)"], output: "\(folder)/liblpuse.so")
        try write("int lp_refs_check(void);\nint main(void) { return lp_refs_check() ? 0 : 1; }\n", to: output + ".c")
        try build(
            [compiler, "-O1", "-o", output, output + ".c", "-L", folder, "-llpuse", "-Wl,-rpath,\(folder)"], output: output)
        return output
    }

    // MARK: Long names: lookups whose names run as C++ and Swift ones do.

    /// A program whose library looks up `lookups` symbols another library exports, each name
    /// `nameBytes` long (at least 10) and differing from the others only in its last six bytes,
    /// as mangled names share their long prefixes: ld.so hashes every byte of each and compares
    /// every byte with the definer's. With 16-byte names, the same work but for the bytes.
    public func longNames(lookups: Int, nameBytes: Int) throws(CalibrationError) -> String {
        let name = "names-\(lookups)-\(nameBytes)"
        let folder = try subfolder(name)
        let output = "\(folder)/\(name)"
        guard !exists(output) else { return output }
        let names = (0..<lookups).map { Self.symbolName($0, bytes: nameBytes) }
        try write(names.enumerated().map { "int \($1) = \($0);\n" }.joined(), to: "\(folder)/lpnamed.c")
        try build([compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpnamed.so", "\(folder)/lpnamed.c"],
                  output: "\(folder)/liblpnamed.so")
        var user = names.map { "extern int \($0);\n" }.joined()
        user += "void *lp_refs[] = {\n" + names.map { "&\($0)" }.joined(separator: ",\n") + "\n};\n"
        user += "int lp_refs_check(void) { return *(int *)lp_refs[\(lookups - 1)] == \(lookups - 1); }\n"
        try write(user, to: "\(folder)/lpuse.c")
        try build(
            [compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpuse.so", "\(folder)/lpuse.c", "-L", folder,
             "-llpnamed", "-Wl,-rpath,\(folder)"], output: "\(folder)/liblpuse.so")
        try write("int lp_refs_check(void);\nint main(void) { return lp_refs_check() ? 0 : 1; }\n", to: output + ".c")
        try build([compiler, "-O1", "-o", output, output + ".c", "-L", folder, "-llpuse", "-Wl,-rpath,\(folder)"],
                  output: output)
        return output
    }

    /// `lp_`, `x` up to `bytes` less six, then `index` in six digits: `bytes` long (at least 10).
    public static func symbolName(_ index: Int, bytes: Int) -> String {
        let digits = String(index % 1_000_000)
        let padded = String(repeating: "0", count: 6 - digits.count) + digits
        return "lp_" + String(repeating: "x", count: max(bytes, 10) - 9) + padded
    }

    // MARK: Version requirements: one version node per function of a library.

    /// A program calling `count` functions of one library, each defined under a version of its
    /// own: `count` version requirements (Vernaux entries) for two objects, where system
    /// programs have about ten per library.
    public func versionRequirements(_ count: Int) throws(CalibrationError) -> String {
        let name = "versions-\(count)"
        let folder = try subfolder(name)
        let output = "\(folder)/\(name)"
        guard !exists(output) else { return output }
        try write((0..<count).map { "int lp_ver_\($0)(void) { return \($0 % 7); }\n" }.joined(), to: "\(folder)/lpver.c")
        var script = "LPV_0 { global: lp_ver_0; local: *; };\n"
        script += (1..<max(count, 1)).map { "LPV_\($0) { global: lp_ver_\($0); };\n" }.joined()
        try write(script, to: "\(folder)/lpver.map")
        try build(
            [compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpver.so", "\(folder)/lpver.c",
             "-Wl,--version-script,\(folder)/lpver.map"], output: "\(folder)/liblpver.so")
        var text = (0..<count).map { "int lp_ver_\($0)(void);\n" }.joined()
        text += "int main(void) {\n    int sum = 0;\n" + (0..<count).map { "    sum += lp_ver_\($0)();\n" }.joined()
        text += "    return sum == \((0..<count).reduce(0) { $0 + $1 % 7 }) ? 0 : 1;\n}\n"
        try write(text, to: output + ".c")
        try build([compiler, "-O1", "-o", output, output + ".c", "-L", folder, "-llpver", "-Wl,-rpath,\(folder)"],
                  output: output)
        return output
    }

    // MARK: Initializers: `count` constructors in one library, each adding to a counter main checks.

    /// A program whose library runs `count` trivial constructors.
    public func initializers(_ count: Int) throws(CalibrationError) -> String {
        let folder = try subfolder("initializers-\(count)")
        let output = "\(folder)/initializers-\(count)"
        guard !exists(output) else { return output }
        var library = "int lp_init_total;\n"
        library += (0..<count).map {
            "__attribute__((constructor)) static void lp_init_\($0)(void) { lp_init_total += \($0 % 5 + 1); }\n"
        }.joined()
        library += "int lp_init_check(void) { return lp_init_total; }\n"
        try write(library, to: "\(folder)/lpinit.c")
        try build([compiler, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpinit.so", "\(folder)/lpinit.c"],
                  output: "\(folder)/liblpinit.so")
        let expected = (0..<count).reduce(0) { $0 + $1 % 5 + 1 }
        try write(
            "int lp_init_check(void);\nint main(void) { return lp_init_check() == \(expected) ? 0 : 1; }\n",
            to: output + ".c")
        try build([compiler, "-O1", "-o", output, output + ".c", "-L", folder, "-llpinit", "-Wl,-rpath,\(folder)"],
                  output: output)
        return output
    }

    // MARK: The page cache

    /// Writes the built programs and libraries out and drops them from the page cache, so that
    /// their next launch reads them back the way an installed program's files are read (mmap
    /// read-ahead) and a read fault maps one 64 KiB window, as `LoaderWork.symbolTableFaults`
    /// counts. Freshly written by the linker, a file sits in the page cache in large folios and
    /// a fault maps a whole folio (105–155 KiB a fault in the 200k-symbol tables on kernel 6.18):
    /// the synthetic tables then took half the faults counted, a fault fitted at 0–1.4 µs
    /// instead of the ~2.5 µs it costs, and node's sparse reads of its tables (3 pages a fault)
    /// came out 15–33% under. Best effort: a file that cannot be opened stays as it is. Returns
    /// how many files were dropped.
    @discardableResult
    public func dropFromPageCache() -> Int {
        var dropped = 0
        var folders = [directory]
        while let folder = folders.popLast() {
            for name in DirectoryListing.names(folder) ?? [] {
                let path = "\(folder)/\(name)"
                var status = stat()
                guard lstat(path, &status) == 0 else { continue }
                if status.st_mode & S_IFMT == S_IFDIR {
                    folders.append(path)
                } else if status.st_mode & S_IFMT == S_IFREG, Self.dropFromPageCache(path) {
                    dropped += 1
                }
            }
        }
        return dropped
    }

    /// Dirty pages stay cached: they are written out first.
    static func dropFromPageCache(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        _ = fdatasync(fd)
        return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0
    }

    // MARK: Files and the compiler

    private func subfolder(_ name: String) throws(CalibrationError) -> String {
        let path = "\(directory)/\(name)"
        try Self.makeDirectory(path)
        return path
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func makeDirectory(_ path: String) throws(CalibrationError) {
        var made = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            made += "/" + component
            if mkdir(made, 0o755) != 0, errno != EEXIST {
                throw .cannotWrite(path: made, reason: String(cString: strerror(errno)))
            }
        }
    }

    private func write(_ text: String, to path: String) throws(CalibrationError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Runs the compiler; `output` is removed when it fails, so a half-built file is never reused.
    private func build(_ arguments: [String], output: String) throws(CalibrationError) {
        let log = output + ".log"
        let status = Self.spawnAndWait(arguments, log: log)
        guard status == 0 else {
            unlink(output)
            let text = SmallFile.read(log) ?? ""
            throw .buildFailed(command: arguments.prefix(6).joined(separator: " "), status: status, output: text)
        }
        unlink(log)
    }

    /// Runs `arguments[0]` with stdout and stderr to `log`; returns its exit status (-1 when it
    /// could not be started, 128 + signal when killed).
    static func spawnAndWait(_ arguments: [String], log: String) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The compiler must not inherit what launchprof may run under (a preload, the hook fd).
        var environment: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix("LD_PRELOAD=") && !text.hasPrefix("LD_AUDIT=") && !text.hasPrefix("LAUNCHPROF_HOOK_FD=") {
                environment.append(text)
            }
            cursor += 1
        }
        var pid: pid_t = 0
        let argv = CStringArray(arguments)
        let envp = CStringArray(environment)
        guard posix_spawn(&pid, arguments[0], &actions, nil, argv.pointers, envp.pointers) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        // WIFEXITED / WEXITSTATUS by hand: the macros are not imported.
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

}
