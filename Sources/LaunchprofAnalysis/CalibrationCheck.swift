import LaunchprofReport

/// A calibration and how its estimates compare with measurements of programs it was not fitted
/// on: rendered as text (the terminal), Markdown and SVG (Reports/).
public struct CalibrationCheck: Sendable {
    public struct Row: Sendable, Equatable {
        public var name: String
        public var work: LoaderWork
        /// Median of loader.map + loader.relocate over `runs` launches.
        public var measuredNs: Int
        public var runs: Int
        /// The built-in defaults' estimate and the calibrated one.
        public var uncalibratedNs: Int
        public var calibratedNs: Int

        public init(name: String, work: LoaderWork, measuredNs: Int, runs: Int, uncalibratedNs: Int, calibratedNs: Int) {
            self.name = name
            self.work = work
            self.measuredNs = measuredNs
            self.runs = runs
            self.uncalibratedNs = uncalibratedNs
            self.calibratedNs = calibratedNs
        }

        /// measured ÷ estimate.
        public var uncalibratedRatio: Double { ratio(uncalibratedNs) }
        public var calibratedRatio: Double { ratio(calibratedNs) }

        private func ratio(_ estimate: Int) -> Double { estimate == 0 ? 0 : Double(measuredNs) / Double(estimate) }
    }

    public var calibration: HostCalibration
    public var rows: [Row]

    /// A fit's own points beyond which it is not stored: any one off by more than this share…
    public static let pointLimit = 0.25
    /// …or the median point off by more than this.
    public static let medianLimit = 0.10

    /// Why `points` (a fit's own, with their estimates) disagree with their fit — a busy spell
    /// slowed some of them — or nil when they agree: every point within `pointLimit` and the
    /// median within `medianLimit`.
    public static func disagreement(_ points: [CostModelFit.Point]) -> String? {
        guard !points.isEmpty else { return nil }
        let errors = points.map { abs($0.relativeError) }.sorted()
        let median = errors[errors.count / 2]
        let outliers = points.filter { abs($0.relativeError) > pointLimit }
        guard !outliers.isEmpty || median > medianLimit else { return nil }
        func percent(_ value: Double) -> String { "\(Int((value * 100).rounded()))%" }
        var parts: [String] = []
        if let worst = outliers.max(by: { abs($0.relativeError) < abs($1.relativeError) }) {
            parts.append(
                "\(outliers.count) of \(points.count) programs are more than \(percent(pointLimit)) off their fit "
                    + "(worst: \(worst.name), measured \(worst.measuredNs / 1_000) µs, fitted \(worst.estimatedNs / 1_000) µs)")
        }
        if median > medianLimit {
            parts.append("the median program is \(percent(median)) off (limit \(percent(medianLimit)))")
        }
        return parts.joined(separator: "; ")
    }

    public init(calibration: HostCalibration, rows: [Row]) {
        self.calibration = calibration
        self.rows = rows
    }

    /// The calibration's coefficients, its fit per program, then the checks.
    public func text(storedAt path: String) -> String {
        let model = calibration.model
        var lines = [
            "calibration  \(calibration.host.cpu), kernel \(calibration.host.kernel), \(calibration.host.libc), \(calibration.measuredAt)",
            "stored       \(path)",
            "fit          R² \(Self.permille(calibration.rSquaredPermille)), rms error \(calibration.rmsErrorPercent)%, "
                + "\(calibration.points.count) closures × \(calibration.runsPerPoint) runs in \(calibration.durationNs / 1_000_000_000) s",
            "",
            "unit costs (loader.map + loader.relocate)",
        ]
        for (name, picoseconds) in zip(LaunchCostModel.termNames, model.coefficientsPs) {
            lines.append("  " + Self.pad(name, 14) + Self.padLeft(DurationText.picoseconds(picoseconds), 10))
        }
        lines.append("")
        lines.append("fit per closure             measured   estimate   error")
        for point in calibration.points {
            lines.append(
                "  " + Self.pad(point.name, 40) + Self.padLeft(Self.duration(point.measuredNs), 9)
                    + Self.padLeft(Self.duration(point.estimatedNs), 11)
                    + Self.padLeft(Self.percent(point.relativeError), 8))
        }
        if !rows.isEmpty {
            lines.append("")
            lines.append("checks (not fitted on)      measured  uncalibrated (ratio)  calibrated (ratio)")
            for row in rows {
                lines.append(
                    "  " + Self.pad(row.name, 24) + Self.padLeft(Self.duration(row.measuredNs), 10)
                        + Self.padLeft(Self.duration(row.uncalibratedNs), 10) + " (" + Self.ratio(row.uncalibratedRatio) + ")"
                        + Self.padLeft(Self.duration(row.calibratedNs), 12) + " (" + Self.ratio(row.calibratedRatio) + ")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reports/calibration.md: the host, the unit costs, the table of checks and of the fit.
    public func markdown() -> String {
        var lines = [
            "# Loader estimate vs measurement",
            "",
            "Generated by `launchprof calibrate --check … --report Reports` (`Scripts/calibration-report.sh`) on "
                + "\(calibration.host.cpu), \(calibration.host.cores) CPUs, kernel \(calibration.host.kernel), "
                + "\(calibration.host.libc), at \(calibration.measuredAt). Measured: the median of `loader.map` + "
                + "`loader.relocate` over \(rows.first?.runs ?? 0) launches under `launchprof run`'s tracer (the fit itself used the median of \(calibration.runsPerPoint) launches per closure, in 4 interleaved rounds). Estimated: "
                + "`launchprof inspect`'s cost model, uncalibrated (built-in defaults) and calibrated on this host. "
                + "The checked programs are not among those the model was fitted on.",
            "",
            "| program | measured | uncalibrated | measured ÷ uncalibrated | calibrated | measured ÷ calibrated |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            lines.append(
                "| `\(row.name)` | \(Self.duration(row.measuredNs)) | \(Self.duration(row.uncalibratedNs)) | "
                    + "\(Self.ratio(row.uncalibratedRatio)) | \(Self.duration(row.calibratedNs)) | \(Self.ratio(row.calibratedRatio)) |")
        }
        lines += ["", "![estimate vs measured](calibration.svg)", "", "## Unit costs on this host", "", "| term | cost |", "|---|---:|"]
        for (name, picoseconds) in zip(LaunchCostModel.termNames, calibration.model.coefficientsPs) {
            lines.append("| \(name) | \(DurationText.picoseconds(picoseconds)) |")
        }
        lines += [
            "", "## The fit",
            "",
            "R² \(Self.permille(calibration.rSquaredPermille)), rms relative error \(calibration.rmsErrorPercent)% over "
                + "\(calibration.points.count) closures.",
            "", "| closure | measured | estimate | residual |", "|---|---:|---:|---:|",
        ]
        for point in calibration.points {
            lines.append(
                "| \(point.name) | \(Self.duration(point.measuredNs)) | \(Self.duration(point.estimatedNs)) | "
                    + "\(Self.percent(point.relativeError)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reports/calibration.svg: per checked program, measured against both estimates.
    public func svg() -> String {
        let barHeight = 14
        let groupHeight = barHeight * 3 + 14
        let left = 190
        let width = 760
        let plotWidth = width - left - 90
        let height = 60 + rows.count * groupHeight + 30
        let largest = max(rows.map { max($0.measuredNs, $0.uncalibratedNs, $0.calibratedNs) }.max() ?? 1, 1)
        var parts = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" font-family=\"sans-serif\" font-size=\"12\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            "<text x=\"10\" y=\"20\" font-size=\"14\">loader.map + loader.relocate: measured vs estimated (\(Self.escape(calibration.host.cpu)))</text>",
        ]
        let legend = [("measured", "#333333"), ("uncalibrated estimate", "#bbbbbb"), ("calibrated estimate", "#3b7dd8")]
        for (index, (label, colour)) in legend.enumerated() {
            let x = 10 + index * 200
            parts.append("<rect x=\"\(x)\" y=\"32\" width=\"12\" height=\"12\" fill=\"\(colour)\"/>")
            parts.append("<text x=\"\(x + 18)\" y=\"43\">\(label)</text>")
        }
        for (index, row) in rows.enumerated() {
            let top = 60 + index * groupHeight
            parts.append("<text x=\"10\" y=\"\(top + barHeight * 2)\">\(Self.escape(row.name))</text>")
            for (bar, (value, colour)) in [
                (row.measuredNs, "#333333"), (row.uncalibratedNs, "#bbbbbb"), (row.calibratedNs, "#3b7dd8"),
            ].enumerated() {
                let y = top + bar * barHeight
                let length = max(1, value * plotWidth / largest)
                parts.append("<rect x=\"\(left)\" y=\"\(y)\" width=\"\(length)\" height=\"\(barHeight - 2)\" fill=\"\(colour)\"/>")
                parts.append("<text x=\"\(left + length + 4)\" y=\"\(y + barHeight - 3)\">\(Self.duration(value))</text>")
            }
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    // MARK: Formatting

    static func duration(_ ns: Int) -> String {
        DurationText.truncatedMilliseconds(ns, decimals: 2)
    }

    static func permille(_ value: Int) -> String {
        (value < 0 ? "-" : "") + "\(abs(value) / 1_000)." + String(abs(value) % 1_000).leftPadded(3, "0")
    }

    static func percent(_ fraction: Double) -> String {
        let value = Int((fraction * 100).rounded())
        return (value > 0 ? "+" : "") + "\(value)%"
    }

    static func ratio(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return "\(hundredths / 100).\(String(hundredths % 100).leftPadded(2, "0"))"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences("&", "&amp;").replacingOccurrences("<", "&lt;").replacingOccurrences(">", "&gt;")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int, _ fill: Character) -> String {
        count >= width ? self : String(repeating: fill, count: width - count) + self
    }

    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
