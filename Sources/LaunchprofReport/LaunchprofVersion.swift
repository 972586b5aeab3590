/// launchprof's version and the versions of the documents it writes, for `launchprof --version`
/// and for whatever reads its reports.
public enum LaunchprofVersion {
    public static let current = "0.5.0"

    /// Each document launchprof writes, with the `schemaVersion` it writes today.
    public static let schemas: [(document: String, version: Int)] = [
        ("LaunchReport", LaunchReport.currentSchemaVersion),
        ("inspect", InspectReport.currentSchemaVersion),
        ("inspect --dlopen", InspectReport.runtimeLoadsSchemaVersion),
        ("bench summary", BenchSummary.currentSchemaVersion),
        ("comparison", SuiteComparison.currentSchemaVersion),
        ("calibration", HostCalibration.currentSchemaVersion),
    ]

    /// What `launchprof --version` prints.
    public static var description: String {
        "launchprof \(current)\nschemas: " + schemas.map { "\($0.document) \($0.version)" }.joined(separator: ", ")
    }
}
