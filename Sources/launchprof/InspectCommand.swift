import ArgumentParser
import LaunchprofCore
import LaunchprofELF
import LaunchprofReport
import LaunchprofRenderers
#if canImport(Glibc)
    import Glibc
#endif

/// `launchprof inspect PROGRAM`: what the loader will do before `main`, from the ELF files.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what the dynamic loader will do before main, read from the ELF files alone.",
        discussion: """
            \(ExitCause.summary([.success, .missingLibraries, .usage, .badInput, .noInput, .unavailable, .software, .noPermission]))
            """)

    @Flag(name: .long, help: "Write the versioned JSON report instead of text.")
    var json = false

    @Argument(help: "The program: a path, or a name looked up in PATH.")
    var program: String

    /// What to inspect and how to print it.
    struct Request: Equatable {
        var program: String
        var json: Bool

        /// The request when `arguments` are exactly `inspect [--json] PROGRAM` (in either
        /// order, PROGRAM not an option); nil for anything the parser must see.
        init?(arguments: [String]) {
            guard arguments.first == "inspect" else { return nil }
            let rest = arguments.dropFirst()
            let flags = rest.filter { $0 == "--json" }
            let others = rest.filter { $0 != "--json" }
            guard flags.count <= 1, others.count == 1, let program = others.first, !program.hasPrefix("-"),
                !program.isEmpty
            else { return nil }
            self.program = program
            self.json = !flags.isEmpty
        }

        init(program: String, json: Bool) {
            self.program = program
            self.json = json
        }
    }

    func run() throws {
        try InspectCommand.execute(Request(program: program, json: json))
    }

    /// Inspects, prints the report on stdout and failures on stderr, and exits (0, or 3 when
    /// libraries are missing); throws the exit code of a failed inspection.
    static func execute(_ request: Request) throws {
        let json = request.json
        let environment = InspectCommand.environment()
        let session = InspectSession(
            configuration: .init(program: request.program, environment: environment, costModel: costModel(environment)))
        let outcome: InspectOutcome
        do {
            outcome = try session.inspect()
        } catch {
            throw ExitCause.of(error).fail(error.description)
        }
        let report = outcome.report
        let output: [UInt8]
        if json {
            do {
                output = try report.jsonBytes()
            } catch {
                throw ExitCause.software.fail(error.description)
            }
        } else {
            output = Array(InspectTextRenderer().render(report).utf8)
        }
        Terminal.write(1, output)
        for missing in report.missing {
            let needers = missing.neededBy.joined(separator: ", ")
            Terminal.write(2, "launchprof: \(missing.name): \(missing.reason) (needed by \(needers))\n")
        }
        // Exit with the closure still mapped: unmapping ~60 files one by one costs more than
        // reading them did, and the process is done.
        withExtendedLifetime(outcome) {
            // Inspected, but with a library missing the loader would refuse to start the program:
            // scripts must notice, yet the report on stdout is complete.
            Glibc.exit((report.missing.isEmpty ? ExitCause.success : .missingLibraries).rawValue)
        }
    }

    /// This host's calibration (`launchprof calibrate`) when there is one, else the built-in
    /// defaults; a stored file that cannot be used is reported and skipped.
    static func costModel(_ environment: [String: String]) -> LaunchCostModel {
        guard let store = CalibrationStore.user(environment: environment) else { return .standard }
        // No store, no calibration: the host's facts (/proc/cpuinfo) that name its file are not read.
        guard access(store.directory, F_OK) == 0 else { return .standard }
        do {
            return try store.loadModel(host: HostInfo.current()) ?? .standard
        } catch {
            Terminal.write(2, "launchprof: \(error.description); using the built-in cost model\n")
            return .standard
        }
    }

    /// The variables that change what `inspect` resolves (the loader's and the shell's
    /// search paths), read with getenv: building the whole environment costs more.
    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        for name in ["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "XDG_CACHE_HOME", "HOME"] {
            if let value = getenv(name) { result[name] = String(cString: value) }
        }
        return result
    }

}
