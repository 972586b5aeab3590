// swift-tools-version: 6.1
// launchprof: a launch-performance profiler for Linux programs.
//
// Dependencies point down:
//   launchprof (CLI) → LaunchprofMonitor, LaunchprofRenderers, LaunchprofCore
//   LaunchprofRenderers → LaunchprofAnalysis → LaunchprofReport, the event and report model
//   LaunchprofMonitor → LaunchprofCore, LaunchprofRenderers, CSQLite (the field recorder)
//   LaunchprofCore → LaunchprofAnalysis, LaunchprofDisplay → LaunchprofTracing → LaunchprofSampling
//     → LaunchprofELF → LaunchprofReport, LaunchprofSystem (threads); C shims and system libraries
//     where they must
// LaunchprofReport, LaunchprofAnalysis (timelines, statistics, comparisons) and LaunchprofRenderers
// (text, HTML, trace, MetricKit, OpenMetrics, markdown) are pure Swift (no C, no syscalls), tested
// with plain values.
import PackageDescription

let package = Package(
    name: "launchprof",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "launchprof", targets: ["launchprof"]),
        .executable(name: "launchprof-demo", targets: ["launchprof-demo"]),
        .executable(name: "launchprof-demo-swift", targets: ["launchprof-demo-swift"]),
        .library(name: "LaunchprofHooks", targets: ["LaunchprofHooks"]),
        .library(name: "LaunchprofApp", targets: ["LaunchprofApp"]),
        // For the nested Benchmarks/ package, which drives the sessions and tracer in-process.
        .library(name: "LaunchprofCore", targets: ["LaunchprofCore"]),
        .library(name: "LaunchprofTracing", targets: ["LaunchprofTracing"]),
        .library(name: "LaunchprofELF", targets: ["LaunchprofELF"]),
        .library(name: "LaunchprofSystem", targets: ["LaunchprofSystem"]),
        .library(name: "LaunchprofReport", targets: ["LaunchprofReport"]),
        .library(name: "LaunchprofAnalysis", targets: ["LaunchprofAnalysis"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // libelf (Debian: libelf-dev), found on the default paths. libunwind (libunwind-dev) is not
        // linked: CLaunchprof loads it with dlopen when a stack is first unwound, and uses only
        // its headers (its archives are not position-independent: tests and benchmarks are).
        .systemLibrary(name: "CElf", providers: [.apt(["libelf-dev"])]),

        // SQLite (Debian: libsqlite3-dev) for `launchprof monitor`'s store: a release build, being
        // static, links its archive in.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),

        // The only hand-written C in launchprof itself: fork/exec, variadic ptrace, libunwind's
        // macro-named API. Exported symbols are prefixed `lp_`.
        .target(
            name: "CLaunchprof",
            // __cxa_demangle, for C++ frames of sampled stacks.
            linkerSettings: [.linkedLibrary("stdc++")]),

        // The X11 frame observer's client: libxcb and its DAMAGE and X-Resource bindings (Debian:
        // libxcb1-dev, libxcb-damage0-dev, libxcb-res0-dev, with libXau and libXdmcp), linked in
        // from their static archives, so that launchprof runs on machines without X libraries.
        .target(
            name: "CFrameX11",
            linkerSettings: [
                .unsafeFlags([
                    "-Xlinker", "-l:libxcb-damage.a", "-Xlinker", "-l:libxcb-res.a", "-Xlinker", "-l:libxcb.a",
                    "-Xlinker", "-l:libXau.a", "-Xlinker", "-l:libXdmcp.a",
                ])
            ]),

        // The Wayland frame observer's relay between the child and its compositor (no library:
        // it reads the wire protocol itself).
        .target(name: "CFrameWayland"),

        // The app's side: a header-only C API (`launchprof.h`) and its Swift counterpart.
        .target(name: "LaunchprofHooks"),
        .target(name: "LaunchprofApp", dependencies: ["LaunchprofHooks"]),

        // The event and report model: the tracer's events, the Codable documents (report,
        // inspect, bench summary, comparison, calibration), their schema versions, their JSON
        // encoding, the run summary the report writer builds as runs stream to disk, and the exit
        // causes every module's error carries (`LaunchprofError`).
        .target(
            name: "LaunchprofReport",
            dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")]),

        // What is derived from events and reports: phase timelines, comparisons and their
        // statistics, merging, the sample analyzer, calibration fits, the inspect advisor.
        .target(name: "LaunchprofAnalysis", dependencies: ["LaunchprofReport"]),

        // Reports as text, HTML, Chrome/Perfetto trace, MetricKit, OpenMetrics, markdown, JSON.
        .target(
            name: "LaunchprofRenderers",
            dependencies: ["LaunchprofReport", "LaunchprofAnalysis"],
            // The HTML report's script, compiled into the binary (no bundle to ship beside it).
            resources: [.embedInCode("HTMLReportScript.js")]),

        // What every module below the CLI builds on to use the system: the thread helper
        // (DedicatedThread: a raw pthread, placed off its creator's CPU or pinned to one), SmallFile, the
        // user's private directory (PrivateDirectory: the holder's socket, the kernel symbol cache),
        // Unix sockets with their peer's credentials (UnixSocket) and argv/envp arrays (CStringArray).
        .target(name: "LaunchprofSystem", dependencies: ["CLaunchprof"]),

        // ELF reading and the loader's dependency resolution, from files alone.
        .target(
            name: "LaunchprofELF", dependencies: ["CElf", "CLaunchprof", "LaunchprofSystem", "LaunchprofReport"]),

        // Stacks: one unwinder (launchprof's cached call frame rules, libunwind for the frames they
        // cannot take) for perf samples and stopped tracees alike, and naming frames through
        // launchprof's own ELF readers.
        .target(
            name: "LaunchprofSampling", dependencies: ["CLaunchprof", "LaunchprofELF", "LaunchprofReport", "LaunchprofSystem"]),

        // ptrace-based launch tracer.
        .target(
            name: "LaunchprofTracing",
            dependencies: ["CLaunchprof", "LaunchprofELF", "LaunchprofSampling", "LaunchprofSystem"]),

        // First frames seen by the display server (X11: launchprof's own client on the display).
        .target(
            name: "LaunchprofDisplay",
            dependencies: ["CFrameX11", "CFrameWayland", "CLaunchprof", "LaunchprofTracing", "LaunchprofReport"]),

        // Sessions: inspect and run, from configuration to report.
        .target(
            name: "LaunchprofCore",
            dependencies: [
                "LaunchprofELF", "LaunchprofTracing", "LaunchprofSampling", "LaunchprofReport",
                "LaunchprofAnalysis", "LaunchprofDisplay",
            ]),

        // `launchprof monitor`: launches launchprof did not start, from the kernel's events and
        // uprobes system-wide, assembled into runs, kept in SQLite, served to Prometheus.
        .target(
            name: "LaunchprofMonitor",
            dependencies: [
                "CSQLite", "CLaunchprof", "LaunchprofCore", "LaunchprofRenderers", "LaunchprofAnalysis",
                "LaunchprofDisplay", "LaunchprofTracing", "LaunchprofELF", "LaunchprofReport", "LaunchprofSystem",
            ]),

        // The CLI. A release build (Scripts/demo.sh) links the Swift runtime statically
        // (`--static-swift-stdlib`) and everything else dynamically, as any Linux program.
        .executableTarget(
            name: "launchprof",
            dependencies: [
                "LaunchprofCore", "LaunchprofMonitor", "LaunchprofReport", "LaunchprofAnalysis", "LaunchprofRenderers",
                "CLaunchprof", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // The demo app README's command 1 profiles: a small C program using the hooks.
        .executableTarget(name: "launchprof-demo", dependencies: ["LaunchprofHooks"]),

        // The Swift demo on LaunchprofApplication.main, the whole lifecycle; its C constructor
        // is the pre-main work prewarming saves.
        .target(name: "LaunchprofDemoSupport"),
        .executableTarget(name: "launchprof-demo-swift", dependencies: ["LaunchprofApp", "LaunchprofDemoSupport"]),

        .testTarget(
            name: "LaunchprofTests",
            dependencies: [
                "LaunchprofCore", "LaunchprofReport", "LaunchprofAnalysis", "LaunchprofRenderers",
                "LaunchprofELF", "LaunchprofTracing", "LaunchprofApp", "LaunchprofDisplay", "LaunchprofMonitor",
                "LaunchprofSystem",
            ],
            resources: [.copy("Fixtures"), .copy("Golden")]),
    ]
)
