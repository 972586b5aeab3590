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

    /// Refuses an output that would replace one of the command's inputs — the program it runs,
    /// a report it reads — or launchprof itself (`run --json ./prog ./prog` replaced the program
    /// with JSON): a usage error (exit 64), before any launch, the file untouched. `inputs`
    /// names each input for the message ("the program ./prog").
    static func notInputs(_ outputs: [(shown: String, path: String?)], inputs: [(what: String, path: String)]) throws {
        let inputs = inputs + [("launchprof itself", "/proc/self/exe")]
        for (shown, path) in outputs {
            guard let path, let destination = try? OutputDestination(path) else { continue }
            if let input = inputs.first(where: { destination.overwrites($0.path) }) {
                throw ValidationError(
                    "\(shown) would overwrite \(input.what), which this command reads: "
                        + "name another file for the output.")
            }
        }
    }

    /// Refuses two output options that write to one place (`--json - --trace -`): the documents
    /// would be mixed on one stream, or one file would replace the other. A usage error (exit 64),
    /// before any launch. `shown` is the option as the user wrote it (`--json -`).
    static func distinct(_ outputs: [(shown: String, path: String?)]) throws {
        var seen: [(shown: String, destination: OutputDestination)] = []
        for (shown, path) in outputs {
            guard let path, let destination = try? OutputDestination(path) else { continue }
            if let earlier = seen.first(where: { $0.destination.writesToSamePlace(as: destination) }) {
                let place = destination.isStandardOutput ? "standard output" : "the same file"
                throw ValidationError(
                    "\(earlier.shown) and \(shown) both write to \(place): the two outputs would be mixed "
                        + "into one; give each its own file.")
            }
            seen.append((shown, destination))
        }
    }
}
