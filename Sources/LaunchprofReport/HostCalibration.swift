/// What `launchprof calibrate` measured on one host and the cost model it fitted: stored in
/// the user's cache directory, read by `inspect`, and printed as the calibration's report.
public struct HostCalibration: Codable, Sendable, Equatable {
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var host: LaunchReport.Host
    /// ISO 8601, UTC.
    public var measuredAt: String
    /// The fitted model (its `calibration` says where it came from).
    public var model: LaunchCostModel
    /// Every measured closure with the fitted model's estimate.
    public var points: [CostModelFit.Point]
    /// R² of the fit, in thousandths.
    public var rSquaredPermille: Int
    /// Root mean square of (estimate − measured) ÷ measured over `points`, in percent.
    public var rmsErrorPercent: Int
    /// Launches per closure and how long the whole calibration took.
    public var runsPerPoint: Int
    public var durationNs: Int

    public init(
        host: LaunchReport.Host, measuredAt: String, model: LaunchCostModel, points: [CostModelFit.Point],
        rSquaredPermille: Int, rmsErrorPercent: Int, runsPerPoint: Int, durationNs: Int
    ) {
        schemaVersion = Self.currentSchemaVersion
        self.host = host
        self.measuredAt = measuredAt
        self.model = model
        self.points = points
        self.rSquaredPermille = rSquaredPermille
        self.rmsErrorPercent = rmsErrorPercent
        self.runsPerPoint = runsPerPoint
        self.durationNs = durationNs
    }

    /// Fits `points` measured on `host` and describes the result; nil when they cannot
    /// determine a model (too few, or linearly dependent).
    public static func fitted(
        _ points: [CostModelFit.Point], host: LaunchReport.Host, measuredAt: String, runsPerPoint: Int, durationNs: Int
    ) -> HostCalibration? {
        guard let result = CostModelFit().fit(points) else { return nil }
        let rSquared = Int((result.rSquared * 1_000).rounded())
        let worst = Int((result.worstRelativeError * 100).rounded())
        let model = LaunchCostModel.standard.with(
            coefficientsPs: result.coefficientsPs,
            source: "launchprof calibrate on \(host.cpu), kernel \(host.kernel), \(host.libc), \(measuredAt): "
                + "least squares over \(points.count) closures, \(runsPerPoint) launches each",
            calibration: .init(
                cpu: host.cpu, kernel: host.kernel, measuredAt: measuredAt, rSquaredPermille: rSquared,
                worstErrorPercent: worst))
        return HostCalibration(
            host: host, measuredAt: measuredAt, model: model, points: result.points, rSquaredPermille: rSquared,
            rmsErrorPercent: Int((result.rmsRelativeError * 100).rounded()), runsPerPoint: runsPerPoint,
            durationNs: durationNs)
    }
}
