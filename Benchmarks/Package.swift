// swift-tools-version: 6.1
// launchprof's own benchmarks and the launch-cost scaling study.
//
// A nested package so the benchmark harness (and its malloc interposer) stays out of the main
// package's build and test graph. Run from this folder: `swift package benchmark` (README.md).
import PackageDescription

let benchmarkDependencies: [Target.Dependency] = [
    "BenchmarkSupport",
    .product(name: "Benchmark", package: "benchmark"),
]

let package = Package(
    name: "launchprof-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "launchprof", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Spawning without the harness's LD_PRELOAD, building the C programs in Programs/.
        .target(name: "BenchmarkSupport"),

        .executableTarget(
            name: "TracerOverhead",
            dependencies: benchmarkDependencies + [
                .product(name: "LaunchprofTracing", package: "launchprof"),
                .product(name: "LaunchprofELF", package: "launchprof"),
                .product(name: "LaunchprofSystem", package: "launchprof"),
            ],
            path: "Benchmarks/TracerOverhead",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(
            name: "Inspect",
            dependencies: benchmarkDependencies + [.product(name: "LaunchprofCore", package: "launchprof")],
            path: "Benchmarks/Inspect",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(
            name: "ReportPath",
            dependencies: benchmarkDependencies + [
                .product(name: "LaunchprofReport", package: "launchprof"),
                // PhaseTimeline (events → phases) is an analysis.
                .product(name: "LaunchprofAnalysis", package: "launchprof"),
                // The atomic report file (LaunchReportWriter(path:…)) lives in Core: it does I/O.
                .product(name: "LaunchprofCore", package: "launchprof"),
            ],
            path: "Benchmarks/ReportPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(
            name: "Hooks",
            dependencies: benchmarkDependencies,
            path: "Benchmarks/Hooks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),

        // The scaling study: generates, builds and measures programs, writes Reports/scaling.*.
        .executableTarget(
            name: "launchprof-scaling",
            dependencies: [.product(name: "LaunchprofCore", package: "launchprof")]),
    ]
)
