import Foundation

/// A real Prometheus (Debian's `prometheus`, installed by Scripts/setup.sh) for one test: its own
/// configuration and TSDB in the test's directory, its web API on a loopback port it picks.
final class PrometheusServer {
    static let binary = "/usr/bin/prometheus"

    let process = Process()
    let log: URL
    private(set) var apiPort: UInt16 = 0

    /// Starts Prometheus with `configuration` (YAML) in `directory`; returns once its API answers.
    init(configuration: String, directory: URL) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw MetricsEndpoint.Failure(description: "prometheus is not installed: run Scripts/setup.sh (Debian package prometheus)")
        }
        let config = directory.appendingPathComponent("prometheus.yml")
        try configuration.write(to: config, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--config.file=" + config.path, "--storage.tsdb.path=" + directory.appendingPathComponent("tsdb").path,
            "--web.listen-address=127.0.0.1:0", "--log.level=warn",
        ]
        log = directory.appendingPathComponent("prometheus.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
    }

    /// Scraping one target every second, with a bearer token from a file.
    convenience init(scrape target: String, bearerTokenFile: String, directory: URL) throws {
        try self.init(
            configuration: """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: field
                    authorization:
                      type: Bearer
                      credentials_file: \(bearerTokenFile)
                    static_configs: [{targets: ["\(target)"]}]

                """, directory: directory)
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }

    /// What Prometheus said in its log (for a failure's message).
    var said: String { (try? String(contentsOf: log, encoding: .utf8)).map { String($0.suffix(1_500)) } ?? "" }

    /// A GET on the API: its JSON.
    func api(_ target: String) throws -> [String: Any] {
        if apiPort == 0 {
            guard let port = MetricsEndpoint.listeningPort(of: process.processIdentifier) else {
                throw MetricsEndpoint.Failure(description: "Prometheus listens on no port yet")
            }
            apiPort = port
        }
        let body = try MetricsEndpoint.get(port: apiPort, target)
        guard let json = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw MetricsEndpoint.Failure(description: "not JSON from \(target): \(String(decoding: body, as: UTF8.self))")
        }
        return json
    }

    /// The value of a PromQL query with one result now, or nil.
    func value(_ query: String) -> String? {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        guard let json = try? api("/api/v1/query?query=\(encoded)"),
            let result = (json["data"] as? [String: Any])?["result"] as? [[String: Any]], result.count == 1
        else { return nil }
        return (result[0]["value"] as? [Any])?.last as? String
    }

    /// Asks `query` until it gives `expected` or `timeout` seconds pass; the last value. A scrape
    /// happens every second and no event says when one lands, so the API is asked every 200 ms.
    func waitForValue(_ query: String, toBe expected: String, timeout: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var last: String?
        while Date() < deadline, process.isRunning {
            last = value(query)
            if last == expected { return last }
            usleep(200_000)
        }
        if !process.isRunning { throw MetricsEndpoint.Failure(description: "Prometheus exited: \(said)") }
        return last
    }
}
