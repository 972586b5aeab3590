import LaunchprofAnalysis
import LaunchprofRenderers
import LaunchprofReport
import Testing

/// `calibrate`'s text: fixed columns that stay apart when a name overflows,
/// and the names escaped in the SVG.
@Suite("Calibration: the check as text")
struct CalibrationCheckTextTests {
    static func check(pointName: String, rowName: String) -> CalibrationCheck {
        let host = LaunchReport.Host(kernel: "6.1.0", cpu: "Test CPU <x86>", cores: 2, libc: "glibc 2.36")
        let point = CalibrationPoint(name: pointName, work: LoaderWork(), measuredNs: 1_234_000, runs: 4, estimatedNs: 1_000_000)
        let calibration = HostCalibration(
            host: host, measuredAt: "2026-11-24T19:00:00Z", model: .standard, points: [point], rSquaredPermille: 987,
            rmsErrorPercent: 5, runsPerPoint: 4, durationNs: 3_000_000_000)
        let row = CalibrationCheck.Row(
            name: rowName, work: LoaderWork(), measuredNs: 2_000_000, runs: 8, uncalibratedNs: 1_000_000,
            calibratedNs: 2_100_000)
        return CalibrationCheck(calibration: calibration, rows: [row])
    }

    @Test("a point's name fills its column; the figures follow right-aligned")
    func columns() throws {
        let text = Self.check(pointName: "short", rowName: "ls").text(storedAt: "/tmp/c.json")
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("  short") })
        // 2 + 40 columns of name, then the measured time right-aligned in 9.
        #expect(line == "  short" + String(repeating: " ", count: 35) + "  1.23 ms" + "    1.00 ms" + "    -19%", "\(line)")
        #expect(text.contains("R² 0.987"), "\(text)")
    }

    @Test("a name wider than its column still leaves a space before the figures")
    func overflow() throws {
        let long = String(repeating: "n", count: 45)
        let text = Self.check(pointName: long, rowName: String(repeating: "r", count: 30)).text(storedAt: "/tmp/c.json")
        #expect(text.contains("  " + long + " " + "  1.23 ms"), "\(text)")
        #expect(text.contains(String(repeating: "r", count: 30) + " " + "   2.00 ms"), "\(text)")
    }

    @Test("the SVG escapes the names it draws")
    func svgEscapes() {
        let svg = Self.check(pointName: "p", rowName: "a&b <c>").svg()
        #expect(svg.contains("a&amp;b &lt;c&gt;"), "\(svg)")
        #expect(svg.contains("Test CPU &lt;x86&gt;"), "\(svg)")
        #expect(!svg.contains("<c>"))
    }
}
