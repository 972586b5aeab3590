import Foundation

/// The fixtures of issue 35, built from source by the tests: a program that dlopens libraries
/// after `main`, a GtkApplication and a Qt application that never call launchprof (their
/// development packages: libgtk-3-dev, qtbase5-dev, installed by `Scripts/setup.sh test`).
enum ToolkitFixtures {
    /// run-dlopen.c: busy `LP_DLOPEN_DELAY_US` in `main`, then dlopen of each path in
    /// `LP_DLOPEN`; truth "dlopen <file> <begin> <end>" around each call.
    static func dlopenProgram() throws -> String {
        try FixtureBuilder.build(["run-dlopen.c"], output: "toolkits/run-dlopen", flags: ["-ldl"])
    }

    /// liblpdltop.so, which needs liblpdlneed.so beside it (run-lib.c, no work unless told): a
    /// dlopen of it loads and initialises two objects.
    static func libraryNeedingAnother() throws -> String {
        try RunFixtures.library("lpdlneed", directory: "toolkits")
        return try FixtureBuilder.build(
            ["run-lib.c"], output: "toolkits/liblpdltop.so",
            flags: ["-fPIC", "-shared", "-DLP_LIB_NAME=lpdltop", "-L", FixtureBuilder.outputRoot.appendingPathComponent("toolkits").path,
                    "-Wl,--no-as-needed", "-llpdlneed", "-Wl,-rpath,$ORIGIN"])
    }

    /// toolkit-gtk3.c (GtkApplication): truth "register", "startup-handler", "activate-handler".
    static func gtk3() throws -> String {
        try FixtureBuilder.build(["toolkit-gtk3.c"], output: "toolkits/toolkit-gtk3", flags: try pkgConfig("gtk+-3.0"))
    }

    /// toolkit-qt5.cpp (QApplication): truth "construct QApplication", "setup".
    static func qt5() throws -> String {
        try FixtureBuilder.build(
            ["toolkit-qt5.cpp"], output: "toolkits/toolkit-qt5", flags: ["-fPIC"] + (try pkgConfig("Qt5Widgets")) + ["-lstdc++"])
    }

    /// `pkg-config --cflags --libs` of `package`, split into arguments.
    static func pkgConfig(_ package: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pkg-config")
        process.arguments = ["--cflags", "--libs", package]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureBuilder.BuildError(description: "pkg-config found no \(package): run Scripts/setup.sh test")
        }
        return String(decoding: output, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }
}
