import LaunchprofReport

/// `launchprof report --html`: one self-contained HTML file (no network, no CDN) that draws the
/// report with inline SVG: the phase waterfall of the median and of any run, every run at a
/// glance, the distribution of time to first frame (histogram and per-run strip), the time
/// before `main` by library, the sampler's flags and flame graph, prewarmed vs ordinary launches.
///
/// The report itself is embedded as JSON and drawn by an inline script (`HTMLReportScript`), so
/// the page holds every number the JSON does. The script marks `<body data-render="ok">` and the
/// number of charts it drew when it is done, or `data-render="error: …"`, for headless checks.
public struct HTMLReportRenderer: LaunchReportRenderer {
    public init() {}

    public func render(_ report: LaunchReport) throws(LaunchReportError) -> String {
        let json = try LaunchReportWriter.encode(report)
        let title = "launchprof · " + (report.target.path.split(separator: "/").last.map(String.init) ?? report.target.path)
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="launchprof">
            <title>\(Self.escapeHTML(title))</title>
            <style>
            \(HTMLReportStyle.css)
            </style>
            </head>
            <body data-render="pending">
            <header><h1>\(Self.escapeHTML(title))</h1><p id="lp-subtitle"></p></header>
            <main id="lp-main"><noscript>This report draws its charts with JavaScript; the data is in the page source.</noscript></main>
            <script type="application/json" id="lp-report">\(Self.scriptSafe(json))</script>
            <script>
            \(HTMLReportScript.source)
            </script>
            </body>
            </html>

            """
    }

    /// JSON made safe inside `<script>`: `<` only occurs inside JSON strings, where `\u003c`
    /// means the same, so no `</script>` or `<!--` can end or change the block.
    static func scriptSafe(_ json: [UInt8]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(json.count)
        for byte in json {
            if byte == UInt8(ascii: "<") {
                bytes += Array("\\u003c".utf8)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func escapeHTML(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
