import Foundation
import LaunchprofReport
import Testing

/// The HTML page as text: self-contained, the report embedded safely. (That it draws is checked
/// in headless Chromium by `ReportExportCommandTests`.)
@Suite("HTML report")
struct HTMLReportRendererTests {
    @Test("one file: no external resource, the report embedded and recoverable")
    func selfContained() throws {
        var runs = [
            ExportSamples.run(index: 0, firstFrameMs: 14, hangsMs: [300], sampled: true),
            ExportSamples.run(index: 1, firstFrameMs: 9_000, optimizedMs: 20),
        ]
        // A phase name that would end the script block if it were not escaped.
        runs[0].phases.append(.init(name: "</script><script>alert(1)</script>", startNs: 1, durationNs: 1))
        let report = ExportSamples.report(runs)
        let html = try HTMLReportRenderer().render(report)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for external in ["<link", " src=", "href=", "@import", "url(", "https://", "fetch(", "XMLHttpRequest"] {
            #expect(!html.contains(external), "no \(external)")
        }
        // The only URL is the SVG namespace, which is a name, not a resource.
        #expect(html.components(separatedBy: "http://").count - 1 == html.components(separatedBy: "http://www.w3.org/2000/svg").count - 1)
        #expect(html.components(separatedBy: "</script>").count - 1 == 2, "only the two script blocks end")

        let start = try #require(html.range(of: #"<script type="application/json" id="lp-report">"#))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let embedded = Data(html[start.upperBound..<end.lowerBound].utf8)
        #expect(try JSONDecoder().decode(LaunchReport.self, from: embedded) == report)
        try SchemaValidator.expectValid(embedded, against: .launchReport, "embedded report")
    }
}
