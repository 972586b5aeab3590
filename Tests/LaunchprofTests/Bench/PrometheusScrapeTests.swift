import Foundation
import Testing

@testable import LaunchprofReport
@testable import LaunchprofRenderers

/// A real Prometheus (Debian's `prometheus`, installed by Scripts/setup.sh) scrapes a report's
/// metrics from a test endpoint: once as its scrapes ask (OpenMetrics, by its Accept header) and
/// once in the classic text format. Both are read whole: the target is up with no error, every
/// family keeps its type (the counter a counter, the saving a gauge), and the samples hold the
/// report's values.
@Suite("export: scraped by a real Prometheus, in both formats")
struct PrometheusScrapeTests {
    @Test func prometheusReadsBothFormats() throws {
        var generator = SeededGenerator(seed: 31)
        var report = BenchSamples.report(runs: 4, workNs: 3_000_000, noise: 0.1, generator: &generator)
        report.runs[3].outcome = RunOutcome(kind: .crashed, signal: "SIGSEGV", signalNumber: 11)
        report = LaunchReport(target: report.target, host: report.host, mode: report.mode, runs: report.runs)
        let endpoint = try MetricsEndpoint(MetricsRenderer.exposition(report), fixed: ["/classic": .prometheusText])
        defer { endpoint.stop() }

        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lp-prometheus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let prometheus = try PrometheusServer(
            configuration: """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: negotiated
                    metrics_path: /negotiated
                    static_configs: [{targets: ["127.0.0.1:\(endpoint.port)"]}]
                  - job_name: classic
                    metrics_path: /classic
                    static_configs: [{targets: ["127.0.0.1:\(endpoint.port)"]}]

                """, directory: work)
        defer { prometheus.stop() }
        // A target's scrapes follow each other: at its second, the first one's samples are in.
        for path in ["/negotiated", "/classic"] {
            do {
                try endpoint.waitForScrapes(of: path, count: 2, timeout: 60)
            } catch {
                Issue.record("\(error); prometheus said: \(prometheus.said)")
                return
            }
        }
        #expect(endpoint.scrapesOf("/negotiated").allSatisfy { $0.served == .openMetrics }, "\(endpoint.scrapesOf("/negotiated"))")
        #expect(endpoint.scrapesOf("/classic").allSatisfy { $0.served == .prometheusText })
        func api(_ target: String) throws -> [String: Any] {
            let json = try prometheus.api(target)
            #expect(json["status"] as? String == "success", "\(target): \(json)")
            return json
        }
        // Both targets up, nothing refused.
        let targets = try #require((try api("/api/v1/targets")["data"] as? [String: Any])?["activeTargets"] as? [[String: Any]])
        #expect(targets.count == 2)
        for target in targets {
            #expect(target["health"] as? String == "up" && (target["lastError"] as? String ?? "x").isEmpty, "\(target)")
        }
        // Every family keeps its type in both formats (0.0.4 names a counter after its samples).
        for job in ["negotiated", "classic"] {
            let selector = "{job=\"\(job)\"}".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let metadata = try #require(try api("/api/v1/targets/metadata?match_target=\(selector)")["data"] as? [[String: Any]])
            var types: [String: String] = [:]
            for entry in metadata { types[entry["metric"] as? String ?? "?"] = entry["type"] as? String }
            // The counter's metadata under the name the format gives it: the family in
            // OpenMetrics, the samples' name in 0.0.4 (under the family name there, the samples
            // `launchprof_runs_total` would have no type: what classic readers did with the
            // OpenMetrics text).
            #expect(types[job == "classic" ? "launchprof_runs_total" : "launchprof_runs"] == "counter", "\(job): \(types)")
            #expect(types["launchprof_time_to_first_frame_seconds"] == "summary", "\(job): \(types)")
            #expect(types["launchprof_phase_duration_seconds"] == "summary", "\(job): \(types)")
            #expect(!types.values.contains("unknown") && !types.values.contains("untyped"), "\(job): \(types)")
            // The samples hold the report's values.
            let query = "launchprof_runs_total{job=\"\(job)\",outcome=\"crashed\"}".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let result = try #require((try api("/api/v1/query?query=\(query)")["data"] as? [String: Any])?["result"] as? [[String: Any]])
            #expect((result.first?["value"] as? [Any])?.last as? String == "1", "\(job): \(result)")
            let median = "launchprof_time_to_first_frame_seconds{job=\"\(job)\",quantile=\"0.5\"}".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let value = try #require((try api("/api/v1/query?query=\(median)")["data"] as? [String: Any])?["result"] as? [[String: Any]])
            let expected = try #require(report.summary.timeToFirstFrameNs?.median)
            #expect(((value.first?["value"] as? [Any])?.last as? String).flatMap(Double.init) == Double(expected) / 1e9, "\(job): \(value)")
        }
    }
}
