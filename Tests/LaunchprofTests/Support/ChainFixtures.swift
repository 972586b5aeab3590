import Foundation

/// run-chain-app.c and its libraries libchain1.so → libchain2.so → libchain3.so → libchain4.so
/// (each needs the next), whose only initializers stamp their own entry (see run-chain-lib.c).
enum ChainFixtures {
    static func app() throws -> String {
        let directory = "run-chain"
        let libraryDirectory = FixtureBuilder.outputRoot.appendingPathComponent(directory).path
        for index in [4, 3, 2, 1] {
            let next = index < 4 ? ["-L", libraryDirectory, "-Wl,--no-as-needed", "-lchain\(index + 1)"] : []
            // A frame pointer makes the constructor start with `push %rbp`, an instruction the
            // kernel emulates on a uprobe hit, as it does the `jmp` of gcc's frame_dummy.
            try FixtureBuilder.build(
                ["run-chain-lib.c"], output: "\(directory)/libchain\(index).so",
                flags: ["-fPIC", "-shared", "-nostartfiles", "-fno-omit-frame-pointer", "-DLP_CHAIN_NAME=\(index)"]
                    + next + ["-Wl,-rpath,$ORIGIN"])
        }
        return try FixtureBuilder.build(
            ["run-chain-app.c"], output: "\(directory)/run-chain-app",
            flags: ["-L", libraryDirectory, "-Wl,--no-as-needed", "-lchain1", "-lchain2", "-lchain3", "-lchain4", "-Wl,-rpath,$ORIGIN"])
    }
}
