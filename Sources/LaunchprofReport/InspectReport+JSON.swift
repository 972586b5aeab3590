#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension InspectReport {
    /// The report as pretty-printed JSON with sorted keys, ending in a newline.
    public func jsonBytes() throws(LaunchReportError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
        } catch {
            throw .encodingFailed(reason: String(describing: error))
        }
    }
}
