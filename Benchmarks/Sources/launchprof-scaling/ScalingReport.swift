/// `Reports/scaling.json`: every measured point, the fitted lines, and the per-unit costs.
struct ScalingReport: Codable, Sendable {
    static let currentSchemaVersion = 1

    struct Host: Codable, Sendable {
        var kernel: String
        var cpu: String
        var cores: Int
        var libc: String
    }

    struct Curve: Codable, Sendable {
        var kind: ScalingStudy.Kind
        var xLabel: String
        /// The phase whose slope is the per-unit cost.
        var phase: String
        var unitName: String
        var points: [PointMeasurement]
        /// A least-squares line per phase key (see `PointMeasurement.keys`) over the points.
        var fits: [String: LinearFit]
        /// The slope of `phase`: nanoseconds per unit (per library, relocation, initializer).
        var slopeNsPerUnit: Double
        /// The slope of timeToMain: what one more unit costs the launch as a whole.
        var timeToMainSlopeNsPerUnit: Double
    }

    /// The figures `LaunchCostModel` quotes, rounded to whole ns.
    struct Derived: Codable, Sendable {
        var perLibraryMapNs: Int
        var perLibraryMapAndRelocateNs: Int
        var perLibraryTimeToMainNs: Int
        var perRelativeRelocationNs: Int
        var perSymbolicRelocationNs: Int
        var perInitializerNs: Int
    }

    var schemaVersion = currentSchemaVersion
    var host: Host
    var launchprof: String
    var runsPerPoint: Int
    /// Each point's runs were split over this many rounds through all sizes.
    var rounds: Int
    var warmupPerPoint: Int
    var measuredAt: String
    var curves: [Curve]
    var derived: Derived?
}
