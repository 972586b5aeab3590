import Foundation

/// Writes and builds (with /usr/bin/cc) the study's C programs under a work directory:
/// one executable per (study, size), each exiting 0 only if the code it was built to exercise
/// really ran, so a measurement of a broken build cannot pass for a result.
struct ProgramGenerator {
    let directory: String
    let cc = "/usr/bin/cc"

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The executable for `size` units of `kind`, built if missing.
    func program(_ kind: ScalingStudy.Kind, size: Int) throws -> String {
        switch kind {
        case .libraries: try libraries(size)
        case .relativeRelocations: try relocations(size, symbolic: false)
        case .symbolicRelocations: try relocations(size, symbolic: true)
        case .initializers: try initializers(size)
        }
    }

    // MARK: Libraries: main calls one function in each of `count` libraries.

    private func libraries(_ count: Int) throws -> String {
        let folder = try subfolder("libraries")
        for index in 0..<count where !exists("\(folder)/liblpscale\(index).so") {
            let source = "\(folder)/lpscale\(index).c"
            try write("int lp_scale_\(index)(void) { return \(index % 7); }\n", to: source)
            try Shell.run([cc, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpscale\(index).so", source])
        }
        let output = "\(folder)/libraries-\(count)"
        guard !exists(output) else { return output }
        var text = (0..<count).map { "int lp_scale_\($0)(void);\n" }.joined()
        text += "int main(void) {\n    int sum = 0;\n"
        text += (0..<count).map { "    sum += lp_scale_\($0)();\n" }.joined()
        let expected = (0..<count).reduce(0) { $0 + $1 % 7 }
        text += "    return sum == \(expected) ? 0 : 1;\n}\n"
        try write(text, to: output + ".c")
        try Shell.run(
            [cc, "-O1", "-o", output, output + ".c", "-L", folder, "-Wl,-rpath,\(folder)", "-Wl,--no-as-needed"]
                + (0..<count).map { "-llpscale\($0)" })
        return output
    }

    // MARK: Relocations: a table of `count` pointers in a library.
    // Relative: pointers to the library's own static array (R_X86_64_RELATIVE).
    // Symbolic: pointers to 1,024 symbols another library exports (R_X86_64_64, one symbol
    // lookup each; consecutive entries name different symbols, so glibc's one-entry lookup
    // cache never answers).

    static let symbolCount = 1_024

    private func relocations(_ count: Int, symbolic: Bool) throws -> String {
        let name = symbolic ? "symbolic" : "relative"
        let folder = try subfolder("\(name)-\(count)")
        let output = "\(folder)/\(name)-\(count)"
        guard !exists(output) else { return output }
        var library = ""
        if symbolic {
            let symbols = (0..<Self.symbolCount).map { "int lp_sym_\($0) = \($0);\n" }.joined()
            try write(symbols, to: "\(folder)/lpsyms.c")
            try Shell.run([cc, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpsyms.so", "\(folder)/lpsyms.c"])
            library += (0..<Self.symbolCount).map { "extern int lp_sym_\($0);\n" }.joined()
        } else {
            library += "static int lp_targets[\(Self.symbolCount)] = {1};\n"
        }
        library += "int *lp_table[\(count)] = {\n"
        var entries: [String] = []
        entries.reserveCapacity(count)
        for index in 0..<count {
            let slot = index % Self.symbolCount
            entries.append(symbolic ? "&lp_sym_\(slot)" : "&lp_targets[\(slot)]")
        }
        library += entries.joined(separator: ",\n") + "\n};\n"
        // Reading the table through a function keeps the executable from copy-relocating it.
        library += "int lp_table_check(void) { return lp_table[0] != 0 && lp_table[\(count - 1)] != 0; }\n"
        try write(library, to: "\(folder)/lptable.c")
        var link = [cc, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblptable.so", "\(folder)/lptable.c"]
        if symbolic { link += ["-L", folder, "-llpsyms", "-Wl,-rpath,\(folder)"] }
        try Shell.run(link)
        try write(
            "int lp_table_check(void);\nint main(void) { return lp_table_check() ? 0 : 1; }\n", to: output + ".c")
        try Shell.run([cc, "-O1", "-o", output, output + ".c", "-L", folder, "-llptable", "-Wl,-rpath,\(folder)"])
        return output
    }

    // MARK: Initializers: `count` constructors in one library, each adding to a counter main checks.

    private func initializers(_ count: Int) throws -> String {
        let folder = try subfolder("initializers-\(count)")
        let output = "\(folder)/initializers-\(count)"
        guard !exists(output) else { return output }
        var library = "int lp_init_total;\n"
        library += (0..<count).map {
            "__attribute__((constructor)) static void lp_init_\($0)(void) { lp_init_total += \($0 % 5 + 1); }\n"
        }.joined()
        library += "int lp_init_check(void) { return lp_init_total; }\n"
        try write(library, to: "\(folder)/lpinit.c")
        try Shell.run([cc, "-shared", "-fPIC", "-O1", "-o", "\(folder)/liblpinit.so", "\(folder)/lpinit.c"])
        let expected = (0..<count).reduce(0) { $0 + $1 % 5 + 1 }
        try write(
            "int lp_init_check(void);\nint main(void) { return lp_init_check() == \(expected) ? 0 : 1; }\n",
            to: output + ".c")
        try Shell.run([cc, "-O1", "-o", output, output + ".c", "-L", folder, "-llpinit", "-Wl,-rpath,\(folder)"])
        return output
    }

    // MARK: Files

    private func subfolder(_ name: String) throws -> String {
        let path = "\(directory)/\(name)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    private func write(_ text: String, to path: String) throws {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw ScalingError.cannotWrite(path: path, reason: "\(error)")
        }
    }
}
