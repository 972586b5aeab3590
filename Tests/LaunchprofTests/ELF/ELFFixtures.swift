import Foundation

/// Builds the ELF fixtures (programs and libraries in chosen directory layouts) from the
/// `elf-*.c` sources, through `FixtureBuilder`'s cache.
enum ELFFixtures {
    /// The directory of one layout, under the fixture cache.
    static func root(_ layout: String) -> String {
        FixtureBuilder.outputRoot.appendingPathComponent("elf/\(layout)").path
    }

    /// lib/libelfleaf.so.
    @discardableResult
    static func leaf(_ layout: String, directory: String = "lib") throws -> String {
        try FixtureBuilder.build(
            ["elf-leaf.c"], output: "elf/\(layout)/\(directory)/libelfleaf.so",
            flags: ["-shared", "-fPIC", "-Wl,-soname,libelfleaf.so"])
    }

    /// lib/libelfdep.so, needing libelfleaf.so (found at link time in `leafDirectory`).
    @discardableResult
    static func dep(_ layout: String, directory: String = "lib", leafDirectory: String = "lib", flags: [String] = [])
        throws -> String
    {
        try FixtureBuilder.build(
            ["elf-dep.c"], output: "elf/\(layout)/\(directory)/libelfdep.so",
            flags: ["-shared", "-fPIC", "-Wl,-soname,libelfdep.so", "-L", root(layout) + "/" + leafDirectory, "-lelfleaf"]
                + flags)
    }

    /// bin/prog, needing libelfdep.so.
    static func program(_ layout: String, depDirectory: String = "lib", leafDirectory: String = "lib", flags: [String])
        throws -> String
    {
        try FixtureBuilder.build(
            ["elf-main.c"], output: "elf/\(layout)/bin/prog",
            flags: [
                "-L", root(layout) + "/" + depDirectory, "-lelfdep",
                "-Wl,-rpath-link," + root(layout) + "/" + leafDirectory,
            ] + flags)
    }

    /// The three-object layout (bin/prog → lib/libelfdep.so → lib/libelfleaf.so) with the
    /// given link flags for the program and the middle library.
    static func chain(_ layout: String, programFlags: [String], depFlags: [String] = []) throws -> String {
        try leaf(layout)
        try dep(layout, flags: depFlags)
        return try program(layout, flags: programFlags)
    }

    /// Source of a library with `count` pointer-sized relative relocations.
    static func pointerTableSource(_ count: Int) -> String {
        var text = "static int cells[\(count)];\nint *elf_pointers[\(count)] = {\n"
        for index in 0..<count { text += "    &cells[\(index)],\n" }
        return text + "};\nint elf_dep_value(void) { return *elf_pointers[0] + 42; }\n"
    }

    /// Source of a library with `count` constructors that each count themselves.
    static func constructorsSource(_ count: Int) -> String {
        var text = "static int run;\n"
        for index in 0..<count {
            text += "__attribute__((constructor)) static void elf_constructor_\(index)(void) { run++; }\n"
        }
        return text + "int elf_constructors_run(void) { return run; }\nint elf_constructor_count(void) { return \(count); }\n"
    }
}
