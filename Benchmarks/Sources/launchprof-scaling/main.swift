// launchprof-scaling: how launch cost grows with libraries, relocations and initializers.
//
//   swift run -c release --scratch-path .build-bench launchprof-scaling [--runs N] [--warmup N]
//       [--launchprof PATH] [--output DIR] [--work DIR] [--only KIND] [--quick]
//
// Generates C programs (1–200 libraries; 1k–1M relative and symbolic relocations; 0–1,000
// constructors), builds them with cc, measures each with `launchprof run -r N --json`, and writes
// DIR/scaling.json and DIR/scaling.svg (DIR: the checkout's Reports/).
import Foundation
import LaunchprofCore

#if canImport(Glibc)
import Glibc
#endif

let benchmarksDirectory: String = {
    // …/Benchmarks/Sources/launchprof-scaling/main.swift
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
}()
let rootDirectory = URL(fileURLWithPath: benchmarksDirectory).deletingLastPathComponent().path

struct Options {
    var runs = 30
    var warmup = 3
    var rounds = 3
    var launchprof: String?
    var output = rootDirectory + "/Reports"
    var work = benchmarksDirectory + "/.build-programs/scaling"
    var only: ScalingStudy.Kind?
    var quick = false

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw ScalingError.usage("\(flag) needs a value") }
            return next
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--runs": runs = try Int(value(flag)).flatMap { $0 > 0 ? $0 : nil } ?? { throw ScalingError.usage("--runs takes a positive number") }()
            case "--warmup": warmup = try Int(value(flag)).flatMap { $0 >= 0 ? $0 : nil } ?? { throw ScalingError.usage("--warmup takes a number ≥ 0") }()
            case "--rounds": rounds = try Int(value(flag)).flatMap { $0 > 0 ? $0 : nil } ?? { throw ScalingError.usage("--rounds takes a positive number") }()
            case "--launchprof": launchprof = try value(flag)
            case "--output": output = try value(flag)
            case "--work": work = try value(flag)
            case "--only":
                let name = try value(flag)
                guard let kind = ScalingStudy.Kind(rawValue: name) else {
                    throw ScalingError.usage("--only takes one of \(ScalingStudy.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                only = kind
            case "--quick": quick = true
            case "-h", "--help":
                throw ScalingError.usage("usage: launchprof-scaling [--runs N] [--warmup N] [--rounds N] [--launchprof PATH] [--output DIR] [--work DIR] [--only KIND] [--quick]")
            default: throw ScalingError.usage("unknown option \(flag) (try --help)")
            }
        }
    }

    func launchprofPath() throws -> String {
        let candidates = [launchprof, ProcessInfo.processInfo.environment["LAUNCHPROF_BIN"]].compactMap { $0 }
            + ["\(rootDirectory)/.build-bench/release/launchprof", "\(rootDirectory)/.build/release/launchprof"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ScalingError.missingLaunchprof(
                hint: "build it: swift build -c release --static-swift-stdlib --product launchprof "
                    + "--scratch-path .build-bench (in \(rootDirectory)), or pass --launchprof PATH")
        }
        return path
    }
}

func hostInfo() -> ScalingReport.Host {
    var names = utsname()
    uname(&names)
    let kernel = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
    var buffer = [CChar](repeating: 0, count: 64)
    let libc = confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count) > 0
        ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown libc"
    return .init(kernel: kernel, cpu: model, cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), libc: libc)
}

func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

func runStudy(
    _ study: ScalingStudy, generator: ProgramGenerator, launchprof: String, options: Options
) throws -> ScalingReport.Curve {
    var programs: [(Int, String)] = []
    for size in study.sizes {
        log("build  \(study.kind.rawValue) \(size)")
        programs.append((size, try generator.program(study.kind, size: size)))
    }
    // Rounds: every size is measured once per round, so slow spells of a shared machine fall on
    // all sizes alike instead of bending the curve.
    var pooled: [Int: [String: [Int]]] = [:]
    let perRound = max(1, options.runs / options.rounds)
    for round in 1...options.rounds {
        for (size, program) in programs {
            let samples = try PointMeasurement.samples(
                program: program, launchprof: launchprof, runs: perRound, warmup: options.warmup,
                reportPath: "\(options.work)/report-\(study.kind.rawValue)-\(size).json")
            pooled[size, default: [:]].merge(samples) { $0 + $1 }
            let medians = PointMeasurement(x: size, samples: samples).medianNs
            let summary = PointMeasurement.keys.map { "\($0) \(medians[$0].map { String($0 / 1000) } ?? "–") µs" }
            log("measure \(study.kind.rawValue) \(size), round \(round): " + summary.joined(separator: ", "))
        }
    }
    let points = programs.map { size, _ in PointMeasurement(x: size, samples: pooled[size] ?? [:]) }
    var fits: [String: LinearFit] = [:]
    for key in PointMeasurement.keys {
        fits[key] = LinearFit(points: points.compactMap { point in point.medianNs[key].map { (Double(point.x), Double($0)) } })
    }
    return ScalingReport.Curve(
        kind: study.kind, xLabel: study.xLabel, phase: study.phase, unitName: study.unitName, points: points,
        fits: fits, slopeNsPerUnit: ((fits[study.phase]?.slope ?? 0) * 1000).rounded() / 1000,
        timeToMainSlopeNsPerUnit: ((fits["timeToMain"]?.slope ?? 0) * 1000).rounded() / 1000)
}

func derive(_ curves: [ScalingReport.Curve]) -> ScalingReport.Derived? {
    func curve(_ kind: ScalingStudy.Kind) -> ScalingReport.Curve? { curves.first { $0.kind == kind } }
    guard let libraries = curve(.libraries), let relative = curve(.relativeRelocations),
        let symbolic = curve(.symbolicRelocations), let initializers = curve(.initializers)
    else { return nil }
    func slope(_ curve: ScalingReport.Curve, _ key: String) -> Double { curve.fits[key]?.slope ?? 0 }
    return ScalingReport.Derived(
        perLibraryMapNs: Int(slope(libraries, "loader.map").rounded()),
        perLibraryMapAndRelocateNs: Int((slope(libraries, "loader.map") + slope(libraries, "loader.relocate")).rounded()),
        perLibraryTimeToMainNs: Int(slope(libraries, "timeToMain").rounded()),
        perRelativeRelocationNs: Int(slope(relative, "loader.relocate").rounded()),
        perSymbolicRelocationNs: Int(slope(symbolic, "loader.relocate").rounded()),
        perInitializerNs: Int(slope(initializers, "loader.init").rounded()))
}

func main() -> Int32 {
    do {
        let options = try Options(Array(CommandLine.arguments.dropFirst()))
        let launchprof = try options.launchprofPath()
        let generator = try ProgramGenerator(directory: options.work)
        let studies = ScalingStudy.all.filter { options.only == nil || $0.kind == options.only }
            .map { options.quick ? $0.quick : $0 }
        let started = Date()
        var curves: [ScalingReport.Curve] = []
        for study in studies {
            curves.append(try runStudy(study, generator: generator, launchprof: launchprof, options: options))
        }
        let report = ScalingReport(
            host: hostInfo(), launchprof: launchprof, runsPerPoint: max(1, options.runs / options.rounds) * options.rounds,
            rounds: options.rounds, warmupPerPoint: options.warmup,
            measuredAt: ISO8601DateFormatter().string(from: started), curves: curves,
            derived: options.quick ? nil : derive(curves))
        try FileManager.default.createDirectory(atPath: options.output, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let json = options.output + "/scaling.json"
        let svg = options.output + "/scaling.svg"
        do {
            try (encoder.encode(report) + Data("\n".utf8)).write(to: URL(fileURLWithPath: json), options: .atomic)
            try Data(ScalingPlot(report: report).svg().utf8).write(to: URL(fileURLWithPath: svg), options: .atomic)
        } catch {
            throw ScalingError.cannotWrite(path: options.output, reason: "\(error)")
        }
        for curve in curves {
            print("\(curve.kind.rawValue): \(curve.phase) \(ScalingPlot.duration(curve.slopeNsPerUnit)) per \(curve.unitName); "
                + "timeToMain \(ScalingPlot.duration(curve.timeToMainSlopeNsPerUnit)) per \(curve.unitName)")
        }
        print("wrote \(json) and \(svg) in \(Int(Date().timeIntervalSince(started))) s")
        return 0
    } catch {
        log("launchprof-scaling: \(error)")
        return 1
    }
}

exit(main())
