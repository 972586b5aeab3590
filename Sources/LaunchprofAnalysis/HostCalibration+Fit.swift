import LaunchprofReport

extension HostCalibration {
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
