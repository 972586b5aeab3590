/// Least-squares line y = intercept + slope·x.
struct LinearFit: Codable, Sendable {
    var slope: Double
    var intercept: Double
    /// Coefficient of determination: how well a line explains the points (1 = exactly).
    var rSquared: Double

    init(points: [(x: Double, y: Double)]) {
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / max(n, 1)
        let meanY = points.reduce(0) { $0 + $1.y } / max(n, 1)
        var sxy = 0.0
        var sxx = 0.0
        var syy = 0.0
        for point in points {
            sxy += (point.x - meanX) * (point.y - meanY)
            sxx += (point.x - meanX) * (point.x - meanX)
            syy += (point.y - meanY) * (point.y - meanY)
        }
        slope = sxx == 0 ? 0 : sxy / sxx
        intercept = meanY - slope * meanX
        rSquared = (sxx == 0 || syy == 0) ? 0 : (sxy * sxy) / (sxx * syy)
    }
}
