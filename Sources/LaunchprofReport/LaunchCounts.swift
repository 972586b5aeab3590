/// The deterministic work a launch asks of the loader, from `inspect`: compared exactly, since
/// they do not vary from run to run.
public struct LaunchCounts: Sendable, Equatable, Codable {
    /// Objects the loader maps, the program included.
    public var objects: Int
    /// Relocations of every kind across the closure.
    public var relocations: Int
    /// Objects whose initializers run.
    public var initializers: Int

    public init(objects: Int, relocations: Int, initializers: Int) {
        self.objects = objects
        self.relocations = relocations
        self.initializers = initializers
    }

    public init(_ report: InspectReport) {
        self.init(
            objects: report.totals.objects, relocations: report.totals.relocations.total,
            initializers: report.totals.initializers)
    }

    /// The counts by name, in a fixed order.
    public var named: [(name: String, value: Int)] {
        [("objects", objects), ("relocations", relocations), ("initializers", initializers)]
    }
}
