/// What `launchprof calibrate` measured on one host and the cost model it fitted: stored in
/// the user's cache directory, read by `inspect`, and printed as the calibration's report.
public struct HostCalibration: Codable, Sendable, Equatable {
    public static let currentSchemaVersion = 4

    public var schemaVersion: Int
    public var host: LaunchReport.Host
    /// ISO 8601, UTC.
    public var measuredAt: String
    /// The fitted model (its `calibration` says where it came from).
    public var model: LaunchCostModel
    /// Every measured closure with the fitted model's estimate.
    public var points: [CalibrationPoint]
    /// R² of the fit, in thousandths.
    public var rSquaredPermille: Int
    /// Root mean square of (estimate − measured) ÷ measured over `points`, in percent.
    public var rmsErrorPercent: Int
    /// Launches per closure and how long the whole calibration took.
    public var runsPerPoint: Int
    public var durationNs: Int

    public init(
        host: LaunchReport.Host, measuredAt: String, model: LaunchCostModel, points: [CalibrationPoint],
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
}
