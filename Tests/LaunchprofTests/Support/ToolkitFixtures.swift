import Foundation

/// The fixtures of issue 35, built from source by the tests: a program that dlopens libraries
/// after `main`, GTK 3/4, Qt 5/6, SDL 2 and Tk programs that never call launchprof (their
/// development packages: libgtk-3-dev, libgtk-4-dev, qtbase5-dev, qt6-base-dev, libsdl2-dev,
/// tk8.6-dev, installed by `Scripts/setup.sh test`).
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

    /// run-dlopen-caller.c linked against liblpdlvia.so (run-lib.c), with liblpdlnest.so and
    /// liblpdlleaf.so beside it to be loaded: main's own dlopen, one made by liblpdlvia.so's code,
    /// and one made by liblpdlnest.so's constructor (`LP_CTOR_lpdlnest_DLOPEN`). Returns the
    /// program and the two loadable libraries' paths.
    static func dlopenCallers() throws -> (program: String, nest: String, leaf: String) {
        let directory = "dlopen-caller"
        let via = try RunFixtures.library("lpdlvia", directory: directory)
        let nest = try RunFixtures.library("lpdlnest", directory: directory)
        let leaf = try RunFixtures.library("lpdlleaf", directory: directory)
        let program = try FixtureBuilder.build(
            ["run-dlopen-caller.c"], output: "\(directory)/run-dlopen-caller",
            flags: ["-L", (via as NSString).deletingLastPathComponent, "-Wl,--no-as-needed", "-llpdlvia", "-Wl,-rpath,$ORIGIN"])
        return (program, nest, leaf)
    }

    /// toolkit-gtk3.c (GtkApplication): truth "register", "startup-handler", "activate-handler".
    static func gtk3() throws -> String {
        try FixtureBuilder.build(["toolkit-gtk3.c"], output: "toolkits/toolkit-gtk3", flags: try pkgConfig("gtk+-3.0"))
    }

    /// toolkit-qt.cpp against Qt 5 (QApplication): truth "construct QApplication", "setup".
    static func qt5() throws -> String {
        try FixtureBuilder.build(
            ["toolkit-qt.cpp"], output: "toolkits/toolkit-qt5", flags: ["-fPIC"] + (try pkgConfig("Qt5Widgets")) + ["-lstdc++"])
    }

    /// The same source against Qt 6 (C++17, as Qt 6's headers require).
    static func qt6() throws -> String {
        try FixtureBuilder.build(
            ["toolkit-qt.cpp"], output: "toolkits/toolkit-qt6",
            flags: ["-fPIC", "-std=c++17"] + (try pkgConfig("Qt6Widgets")) + ["-lstdc++"])
    }

    /// toolkit-gtk4.c (GtkApplication): truth as gtk3's.
    static func gtk4() throws -> String {
        try FixtureBuilder.build(["toolkit-gtk4.c"], output: "toolkits/toolkit-gtk4", flags: try pkgConfig("gtk4"))
    }

    /// toolkit-sdl2.c: truth "init SDL_Init", "setup".
    static func sdl2() throws -> String {
        try FixtureBuilder.build(["toolkit-sdl2.c"], output: "toolkits/toolkit-sdl2", flags: try pkgConfig("sdl2"))
    }

    /// toolkit-tk.c: truth "init Tk_Init", "setup".
    static func tk() throws -> String {
        try FixtureBuilder.build(["toolkit-tk.c"], output: "toolkits/toolkit-tk", flags: try pkgConfig("tk"))
    }

    /// Whether pkg-config knows `package` (its development files are installed): a toolkit's
    /// test runs only where it does, and says which package is missing where it does not.
    static func installed(_ package: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pkg-config")
        process.arguments = ["--exists", package]
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
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
