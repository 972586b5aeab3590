extension LaunchCostModel {
    /// A field `init(_:at:)` needs and the document lacks (or holds as another type).
    public struct MissingField: Error, Sendable, CustomStringConvertible {
        public let path: String
        public var description: String { "\(path) is missing or not of its type" }
    }

    /// The model stored at `path` of a document read as scalars (a calibration's `model`): what
    /// `inspect` prices a closure with, read without JSONDecoder (see JSONScalars). The same
    /// fields as the Codable form; a test holds the two readers equal.
    public init(_ scalars: JSONScalars, at path: String) throws(MissingField) {
        func integer(_ key: String) throws(MissingField) -> Int {
            guard let value = scalars.integer(path + "." + key) else { throw MissingField(path: path + "." + key) }
            return value
        }
        func string(_ key: String) throws(MissingField) -> String {
            guard let value = scalars.string(path + "." + key) else { throw MissingField(path: path + "." + key) }
            return value
        }
        var calibration: Calibration?
        if scalars.hasObject(path + ".calibration") {
            calibration = Calibration(
                cpu: try string("calibration.cpu"), kernel: try string("calibration.kernel"),
                measuredAt: try string("calibration.measuredAt"),
                rSquaredPermille: try integer("calibration.rSquaredPermille"),
                worstErrorPercent: try integer("calibration.worstErrorPercent"))
        }
        self.init(
            perLaunchPs: try integer("perLaunchPs"), perObjectPs: try integer("perObjectPs"),
            perSegmentPs: try integer("perSegmentPs"), perRelativeRelocationPs: try integer("perRelativeRelocationPs"),
            perLookupPs: try integer("perLookupPs"), perScopeStepPs: try integer("perScopeStepPs"),
            perPageTouchedPs: try integer("perPageTouchedPs"), perVersionCheckPs: try integer("perVersionCheckPs"),
            perSymbolTablePagePs: try integer("perSymbolTablePagePs"),
            perSymbolTableFaultPs: try integer("perSymbolTableFaultPs"),
            perLookupNameBytePs: try integer("perLookupNameBytePs"),
            perLargeTableLookupPs: try integer("perLargeTableLookupPs"), perInitializerPs: try integer("perInitializerPs"),
            source: try string("source"), calibration: calibration)
    }
}
