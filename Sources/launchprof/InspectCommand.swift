import ArgumentParser
import CLaunchprof
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
            Examples:
              launchprof inspect /usr/bin/gdb
              launchprof inspect --json ./myapp > inspect.json
              launchprof inspect --dlopen glxgears

            \(ExitCause.summary([.success, .missingLibraries, .usage, .badInput, .noInput, .unavailable, .software, .ioError, .noPermission]))
            """)

    @Flag(name: .long, help: "Write the versioned JSON report instead of text.")
    var json = false

    @Flag(name: .long, help: "Read every file again: neither use nor keep a stored result (see docs/inspect-and-calibrate.md, \"Result cache\").")
    var noCache = false

    @Flag(name: .long, help: """
        Launch the program once (as `run` would, with uprobes: root or CAP_PERFMON) and list what \
        it loaded at run time with dlopen, each load's new objects counted as the pre-main closure is.
        """)
    var dlopen = false

    @Argument(help: "The program: a path, or a name looked up in PATH.")
    var program: String

    @Argument(parsing: .captureForPassthrough, help: "With --dlopen: the program's arguments.")
    var arguments: [String] = []

    /// What to inspect and how to print it.
    struct Request: Equatable {
        var program: String
        var json: Bool
        var useCache = true

        /// The request when `arguments` are exactly `inspect [--json] [--no-cache] PROGRAM` (in
        /// any order, PROGRAM not an option); nil for anything the parser must see.
        init?(arguments: [String]) {
            guard arguments.first == "inspect" else { return nil }
            let rest = arguments.dropFirst()
            let flags = ["--json", "--no-cache"]
            let others = rest.filter { !flags.contains($0) }
            guard rest.filter({ $0 == "--json" }).count <= 1, rest.filter({ $0 == "--no-cache" }).count <= 1,
                others.count == 1, let program = others.first, !program.hasPrefix("-"), !program.isEmpty
            else { return nil }
            self.program = program
            self.json = rest.contains("--json")
            self.useCache = !rest.contains("--no-cache")
        }

        init(program: String, json: Bool, useCache: Bool = true) {
            self.program = program
            self.json = json
            self.useCache = useCache
        }
    }

    func run() throws {
        if dlopen {
            try Self.executeRuntimeLoads(program: program, arguments: arguments, json: json)
            return
        }
        guard arguments.isEmpty else { throw ExitCause.usage.fail("program arguments are taken with --dlopen only") }
        try InspectCommand.execute(Request(program: program, json: json, useCache: !noCache))
    }

    /// `--dlopen`: one launch, then its run-time loads counted from their ELF files.
    static func executeRuntimeLoads(program: String, arguments: [String], json: Bool) throws {
        let environment = ProcessEnvironment.current()
        // The closure's estimate priced as `inspect` prices it.
        let costModel = StoredCalibration(InspectCommand.environment())?.costModel() ?? .standard
        guard let result = try RuntimeLoadInspector.inspect(
            program: program, arguments: arguments, environment: environment, costModel: costModel)
        else { throw ExitCause.software.fail("\(program): the launch gave no run to read its loads from") }
        Terminal.write(1, json ? try result.jsonBytes() : Array(RuntimeLoadsTextRenderer().render(result).utf8))
    }

    /// Inspects, prints the report on stdout and failures on stderr, and exits (0, or 3 when
    /// libraries are missing); throws the exit code of a failed inspection.
    static func execute(_ request: Request) throws {
        let startedAtNs = InspectResultCache.realTimeNs()
        let environment = InspectCommand.environment()
        let calibration = StoredCalibration(environment)
        let modelFile = calibration?.path
        let cache = request.useCache ? InspectResultCache.user(environment: environment) : nil
        let key = cache == nil ? nil : InspectResultCache.key(
            program: request.program, json: request.json, environment: environment, modelFile: modelFile)
        if let cache, let key, let stored = cache.lookup(key: key) {
            Terminal.write(1, stored.standardOutput)
            Terminal.write(2, stored.standardError)
            Terminal.finishStandardOutput()
            Glibc.exit(stored.exitStatus)
        }
        // The second CPU's thread starts now: it sets up its tables while this one finds and
        // reads the program.
        let analysis = LoaderWorkAnalyzer.Pipeline()
        // The stored calibration, if any, is read once the closure is resolved, while the other
        // CPU replays its last objects (a thread of its own cost more to start than the read).
        var pendingModel: (@Sendable () -> LaunchCostModel)?
        if let calibration { pendingModel = { calibration.costModel() } }
        let session = InspectSession(
            configuration: .init(program: request.program, environment: environment, pendingCostModel: pendingModel))
        let outcome = try session.inspect(analysis: analysis)
        let report = outcome.report
        let output = request.json ? try report.jsonBytes() : Array(InspectTextRenderer().render(report).utf8)
        var errors = ""
        for missing in report.missing {
            let needers = missing.neededBy.joined(separator: ", ")
            errors += "launchprof: \(missing.name): \(missing.reason) (needed by \(needers))\n"
        }
        Terminal.write(1, output)
        Terminal.write(2, errors)
        Terminal.finishStandardOutput()
        // Inspected, but with a library missing the loader would refuse to start the program:
        // scripts must notice, yet the report on stdout is complete.
        let status = (report.missing.isEmpty ? ExitCause.success : .missingLibraries).rawValue
        if let cache, let key {
            let result = InspectResultCache.Result(
                exitStatus: status, standardOutput: output, standardError: Array(errors.utf8))
            cache.store(
                result, key: key, consulted: outcome.consultedPaths + (modelFile.map { [$0] } ?? []),
                startedAtNs: startedAtNs)
        }
        // Exit with the closure still mapped, and leave the address space's teardown to a
        // helper (lp_detach_teardown): unmapping ~60 files costs more than reading them did,
        // and nobody needs to wait for it.
        withExtendedLifetime(outcome) {
            _ = lp_detach_teardown()
            Glibc.exit(status)
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

/// Where this host's calibration (`launchprof calibrate`) is stored, or would be: the file decides
/// the cost model as much as launchprof's own build does, so its path is part of a stored
/// result's key, and the model is read only when no stored result answers.
struct StoredCalibration {
    let store: CalibrationStore
    let path: String

    /// Nil when the environment names no store directory.
    init?(_ environment: [String: String]) {
        guard let store = CalibrationStore.user(environment: environment) else { return nil }
        self.store = store
        path = store.path(cpu: HostInfo.cpuModel(), kernel: HostInfo.kernelRelease())
    }

    /// The calibration's model when there is one, else the built-in defaults; a stored file that
    /// cannot be used is reported and skipped.
    func costModel() -> LaunchCostModel {
        do {
            return try store.loadModel(file: path) ?? .standard
        } catch {
            Terminal.write(2, "launchprof: \(error.description); using the built-in cost model\n")
            return .standard
        }
    }
}
