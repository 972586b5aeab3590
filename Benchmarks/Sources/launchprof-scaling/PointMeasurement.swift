import Foundation

/// One program of a study measured with `launchprof run --json`: medians over its runs.
struct PointMeasurement: Codable, Sendable {
    /// The study's x: libraries, relocations or initializers.
    var x: Int
    var runs: Int
    /// Median per run of each phase's total (loader.init summed over its objects), and of
    /// timeToMain, in ns. Keys: "loader.map", "loader.relocate", "loader.init", "timeToMain".
    var medianNs: [String: Int]

    static let phases = ["loader.map", "loader.relocate", "loader.init"]
    static let keys = phases + ["timeToMain"]

    /// The medians of pooled samples (see `samples`).
    init(x: Int, samples: [String: [Int]]) {
        self.x = x
        runs = samples["timeToMain"]?.count ?? 0
        medianNs = samples.mapValues { Self.median($0) }
    }

    /// Runs `launchprof run -r runs -w warmup --json` on `program` and returns each run's value
    /// per key (`keys`).
    static func samples(
        program: String, launchprof: String, runs: Int, warmup: Int, reportPath: String
    ) throws -> [String: [Int]] {
        try Shell.run([
            launchprof, "run", "-r", String(runs), "-w", String(warmup), "--json", reportPath, program,
        ])
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: reportPath))
        } catch {
            throw ScalingError.badReport(path: reportPath, reason: "\(error)")
        }
        let report: Report
        do {
            report = try JSONDecoder().decode(Report.self, from: data)
        } catch {
            throw ScalingError.badReport(path: reportPath, reason: "\(error)")
        }
        var perKey: [String: [Int]] = [:]
        for run in report.runs {
            guard run.exitStatus?.code == 0 else {
                throw ScalingError.badReport(path: reportPath, reason: "run \(run.index) of \(program) failed")
            }
            for phase in phases {
                let total = run.phases.filter { $0.name == phase }.reduce(0) { $0 + $1.durationNs }
                perKey[phase, default: []].append(total)
            }
            if let main = run.metrics.timeToMainNs { perKey["timeToMain", default: []].append(main) }
        }
        guard perKey["timeToMain"]?.count == report.runs.count, !report.runs.isEmpty else {
            throw ScalingError.badReport(path: reportPath, reason: "main was not observed in every run")
        }
        return perKey
    }

    static func median(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The parts of a LaunchReport this tool reads.
    private struct Report: Decodable {
        struct Run: Decodable {
            struct Phase: Decodable {
                var name: String
                var durationNs: Int
            }
            struct Metrics: Decodable { var timeToMainNs: Int? }
            struct Exit: Decodable { var code: Int32? }
            var index: Int
            var exitStatus: Exit?
            var phases: [Phase]
            var metrics: Metrics
        }
        var runs: [Run]
    }
}
