import ArgumentParser
import LaunchprofCore
import LaunchprofReport

/// The output options' paths, checked in `validate()`, before any launch or any work: a path
/// that cannot be written exits 73 with the reason, instead of losing a measurement after it.
enum OutputChecks {
    /// A file output (`--json`, `--html`, `-o`…): see `OutputDestination` for what is accepted.
    static func file(_ path: String?, option: String) throws {
        guard let path else { return }
        do throws(LaunchReportError) {
            _ = try OutputDestination(path)
        } catch {
            throw ExitCause.cannotCreate.fail("\(option) \(path): \(error.description)")
        }
    }

    /// A folder an output creates files in (`--metrickit`, `calibrate --report`, `bench -o`).
    static func folder(_ path: String?, option: String, createParents: Bool = false) throws {
        guard let path else { return }
        do throws(LaunchReportError) {
            try OutputDestination.checkFolder(path, createParents: createParents)
        } catch {
            throw ExitCause.cannotCreate.fail("\(option) \(path): \(error.description)")
        }
    }
}
