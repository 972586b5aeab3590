import LaunchprofReport

/// What to inspect and in which environment.
public struct InspectConfiguration: Sendable {
    /// A path, or a bare name looked up in `PATH` as a shell would.
    public var program: String
    /// The environment the loader would see (LD_LIBRARY_PATH, LD_PRELOAD, PATH).
    public var environment: [String: String]
    public var costModel: LaunchCostModel

    public init(program: String, environment: [String: String], costModel: LaunchCostModel = .standard) {
        self.program = program
        self.environment = environment
        self.costModel = costModel
    }
}
