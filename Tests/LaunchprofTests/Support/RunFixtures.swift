import Foundation

/// Builds the `run-*` fixture programs and libraries (sources in `Fixtures/`) with
/// `FixtureBuilder`, into `run/` under the build cache.
enum RunFixtures {
    /// The work that makes every phase of `app(libraries: ["alpha", "beta"])` measurable:
    /// library and program initializers (busy and blocking), three app phases, the first frame
    /// and two extended-launch tasks, each reported on the app's own clock into `truth`.
    static func everyPhaseEnvironment(truth: String) -> [String: String] {
        [
            "LP_FIXTURE_TRUTH": truth,
            "LP_CTOR_alpha_BUSY_US": "3000", "LP_CTOR_beta_SLEEP_US": "4000",
            "LP_PROGRAM_BUSY_US": "2000", "LP_PROGRAM_SLEEP_US": "1000",
            "LP_PHASES": "willFinishLaunching:3000:0,restoreState:0:3000,didFinishLaunching:2000:2000",
            "LP_DRAW_US": "1000", "LP_TASKS": "sync:8000,prefetch:5000",
        ]
    }

    /// `lib<name>.so` from run-lib.c; its constructor's work is `LP_CTOR_<name>_BUSY_US` /
    /// `_SLEEP_US`, its truth line `ctor lib<name>.so`. `name` is letters, digits and `_`.
    @discardableResult
    static func library(_ name: String, directory: String = "run") throws -> String {
        try FixtureBuilder.build(
            ["run-lib.c"], output: "\(directory)/lib\(name).so",
            flags: ["-fPIC", "-shared", "-DLP_LIB_NAME=\(name)"])
    }

    /// run-app.c linked (with --no-as-needed, RUNPATH $ORIGIN) against `lib<name>.so` for each
    /// of `libraries`, in that order; `stripped` links it with `-s` (no symbol table).
    static func app(
        libraries: [String] = [], directory: String = "run", name: String? = nil, stripped: Bool = false
    ) throws -> String {
        for name in libraries { try library(name, directory: directory) }
        let suffix = libraries.isEmpty ? "" : "-" + libraries.joined(separator: "-")
        let libraryDirectory = FixtureBuilder.outputRoot.appendingPathComponent(directory).path
        return try FixtureBuilder.build(
            ["run-app.c"], output: "\(directory)/\(name ?? "run-app" + suffix + (stripped ? "-stripped" : ""))",
            flags: ["-L", libraryDirectory, "-Wl,--no-as-needed"]
                + libraries.map { "-l\($0)" } + ["-Wl,-rpath,$ORIGIN", "-lpthread"] + (stripped ? ["-s"] : []))
    }

    /// An app linked against `count` generated libraries `liblpm<i>.so`, in their own directory.
    static func appWithManyLibraries(_ count: Int) throws -> String {
        try app(
            libraries: (0..<count).map { "lpm\($0)" }, directory: "run-many-\(count)",
            name: "run-app-many")
    }

    /// One of the single-file fixtures: exec-chain, server, daemon, ignore-term, never-ready,
    /// crash.
    static func program(_ name: String) throws -> String {
        try FixtureBuilder.build(["run-\(name).c"], output: "run/run-\(name)")
    }

    /// The hook-header checks, built with warnings as errors: run-hooks-check.c (C) and
    /// run-hooks-cxx.cpp (C++).
    static func hooksCheck(cplusplus: Bool = false) throws -> String {
        let warnings = ["-Wall", "-Wextra", "-Werror"]
        return cplusplus
            ? try FixtureBuilder.build(["run-hooks-cxx.cpp"], output: "run/run-hooks-cxx", flags: warnings)
            : try FixtureBuilder.build(["run-hooks-check.c"], output: "run/run-hooks-check", flags: warnings + ["-std=c99", "-pedantic"])
    }

    /// run-static.c, linked with -static (no dynamic loader).
    static func staticProgram() throws -> String {
        try FixtureBuilder.build(["run-static.c"], output: "run/run-static", flags: ["-static"])
    }
}
