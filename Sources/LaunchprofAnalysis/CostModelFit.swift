import LaunchprofReport

/// Fits `LaunchCostModel`'s coefficients to measured closures by non-negative least squares,
/// and says how well they fit.
///
/// Small and self-contained on purpose (12 unknowns, tens of rows): normal equations solved by
/// Gaussian elimination with partial pivoting, inside an active-set loop that pins a term to 0
/// while its best value would be negative (a unit cost cannot be negative; a negative one
/// would only buy fit on the calibration set with nonsense elsewhere). Rows are weighted by
/// 1 ÷ measured, so the fit minimises relative error: a 0.3 ms program counts as much as an
/// 18 ms one. A few reweighted passes (Huber weights beyond 10% relative error) keep one
/// closure that a busy spell of the machine slowed from pulling every coefficient.
public struct CostModelFit: Sendable {
    /// One measured closure (a model type: calibration files hold them).
    public typealias Point = CalibrationPoint

    /// The result: coefficients (picoseconds, `LaunchCostModel.termNames` order) and quality.
    public struct Result: Sendable {
        public var coefficientsPs: [Int]
        /// The points with their estimates.
        public var points: [Point]
        /// 1 − SS_res ÷ SS_tot over the measured ns (unweighted).
        public var rSquared: Double
        /// Root mean square of the relative errors.
        public var rmsRelativeError: Double
        public var worstRelativeError: Double
    }

    public init() {}

    /// Fits the model to `points`; terms in `fixed` keep the given coefficient (ps) instead of
    /// being fitted. With fewer points than terms, or terms the points cannot tell apart, the
    /// least essential terms are pinned to 0 (`dropOrder`). Nil for fewer than 3 points.
    public func fit(_ points: [Point], fixed: [Int: Int] = [:]) -> Result? {
        guard points.count >= 3 else { return nil }
        var robust = [Double](repeating: 1, count: points.count)
        var coefficients: [Int]?
        for _ in 0..<6 {
            guard let next = fit(points, fixed: fixed, robust: robust) else { return nil }
            coefficients = next
            let model = LaunchCostModel.standard.with(coefficientsPs: next, source: "", calibration: nil)
            robust = points.map { point in
                let error = abs(Double(model.estimateNs(point.work) - point.measuredNs)) / Double(max(point.measuredNs, 1))
                return error <= Self.huberThreshold ? 1 : Self.huberThreshold / error
            }
        }
        return coefficients.map { result(points, coefficients: $0) }
    }

    /// Relative error beyond which a point's weight shrinks (Huber).
    static let huberThreshold = 0.1

    /// One non-negative weighted least-squares fit with extra per-point weights `robust`.
    private func fit(_ points: [Point], fixed: [Int: Int], robust: [Double]) -> [Int]? {
        let terms = LaunchCostModel.termNames.count
        var pinned = fixed.mapValues(Double.init)
        var free = (0..<terms).filter { pinned[$0] == nil }
        // Terms no point exercises cannot be determined: pin them to 0.
        for term in free where points.allSatisfy({ LaunchCostModel.features($0.work)[term] == 0 }) {
            pinned[term] = 0
        }
        free = (0..<terms).filter { pinned[$0] == nil }
        while true {
            let solution = points.count >= free.count ? solve(points, free: free, pinned: pinned, robust: robust) : nil
            guard let solution else {
                // Collinear terms (every object with the same number of segments, say): the
                // least essential free term is pinned to 0 and the rest refitted.
                guard let dropped = Self.dropOrder.first(where: { free.contains($0) }), free.count > 1 else { return nil }
                pinned[dropped] = 0
                free.removeAll { $0 == dropped }
                continue
            }
            // The most negative coefficient is pinned to 0 and the rest refitted.
            if let worst = free.indices.min(by: { solution[$0] < solution[$1] }), solution[worst] < 0 {
                pinned[free[worst]] = 0
                free.remove(at: worst)
                continue
            }
            var coefficients = [Double](repeating: 0, count: terms)
            for (position, term) in free.enumerated() { coefficients[term] = solution[position] }
            for (term, value) in pinned { coefficients[term] = value }
            return coefficients.map { Int($0.rounded()) }
        }
    }

    /// Which term to give up first when the points cannot tell terms apart (`termNames` indices):
    /// those the others approximate best go first.
    static let dropOrder = [2, 11, 10, 7, 8, 6, 5, 9, 1, 3, 4, 0]

    /// The estimates and quality of given coefficients on `points`.
    public func result(_ points: [Point], coefficientsPs: [Int]) -> Result {
        result(points, coefficients: coefficientsPs)
    }

    private func result(_ points: [Point], coefficients: [Int]) -> Result {
        let model = LaunchCostModel.standard.with(coefficientsPs: coefficients, source: "", calibration: nil)
        var estimated = points
        for index in estimated.indices { estimated[index].estimatedNs = model.estimateNs(points[index].work) }
        let measured = points.map { Double($0.measuredNs) }
        let mean = measured.reduce(0, +) / Double(max(measured.count, 1))
        let total = measured.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        let residual = estimated.reduce(0.0) {
            let error = Double($1.estimatedNs - $1.measuredNs)
            return $0 + error * error
        }
        let relative = estimated.map(\.relativeError)
        return Result(
            coefficientsPs: coefficients, points: estimated, rSquared: total > 0 ? 1 - residual / total : 0,
            rmsRelativeError: (relative.reduce(0) { $0 + $1 * $1 } / Double(max(relative.count, 1))).squareRoot(),
            worstRelativeError: relative.map(abs).max() ?? 0)
    }

    /// Weighted least squares for the `free` terms, the `pinned` ones moved to the right side.
    private func solve(_ points: [Point], free: [Int], pinned: [Int: Double], robust: [Double]) -> [Double]? {
        let size = free.count
        guard size > 0 else { return [] }
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: size + 1), count: size)
        for (point, robustness) in zip(points, robust) where point.measuredNs > 0 {
            let features = LaunchCostModel.features(point.work)
            // Weights multiply both sides of a row: the squared error is weighted by their square.
            let weight = robustness.squareRoot() / Double(point.measuredNs)
            // Target in ps, less what the pinned terms already explain.
            var target = Double(point.measuredNs) * 1_000
            for (term, value) in pinned { target -= value * features[term] }
            let row = free.map { features[$0] * weight }
            let rightSide = target * weight
            for i in 0..<size {
                for j in 0..<size { matrix[i][j] += row[i] * row[j] }
                matrix[i][size] += row[i] * rightSide
            }
        }
        return Self.gaussianElimination(matrix)
    }

    /// Solves the augmented system `matrix` (n rows of n + 1), nil when it is singular.
    static func gaussianElimination(_ matrix: [[Double]]) -> [Double]? {
        var rows = matrix
        let size = rows.count
        // Columns differ by many orders of magnitude (1 launch vs 10^5 relocations): scale
        // each to a unit diagonal so the pivot threshold means the same for all.
        var scale = [Double](repeating: 1, count: size)
        for column in 0..<size where rows[column][column] > 0 {
            scale[column] = 1 / rows[column][column].squareRoot()
        }
        for i in 0..<size {
            for j in 0..<size { rows[i][j] *= scale[i] * scale[j] }
            rows[i][size] *= scale[i]
        }
        for column in 0..<size {
            guard let pivot = (column..<size).max(by: { abs(rows[$0][column]) < abs(rows[$1][column]) }),
                abs(rows[pivot][column]) > 1e-9
            else { return nil }
            rows.swapAt(column, pivot)
            for row in 0..<size where row != column {
                let factor = rows[row][column] / rows[column][column]
                guard factor != 0 else { continue }
                for k in column...size { rows[row][k] -= factor * rows[column][k] }
            }
        }
        return (0..<size).map { rows[$0][size] / rows[$0][$0] * scale[$0] }
    }
}
