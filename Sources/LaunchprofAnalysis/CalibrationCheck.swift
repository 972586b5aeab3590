import LaunchprofReport

/// A calibration and how its estimates compare with measurements of programs it was not fitted
/// on (rendered as text, Markdown and SVG by LaunchprofRenderers).
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
}
