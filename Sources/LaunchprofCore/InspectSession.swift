import LaunchprofELF
import LaunchprofReport
#if canImport(Glibc)
import Glibc
#endif

/// `launchprof inspect`: from a program name to an `InspectReport`, reading ELF files only.
public struct InspectSession: Sendable {
    public let configuration: InspectConfiguration
    public var resolver: DependencyResolver

    public init(configuration: InspectConfiguration, resolver: DependencyResolver = .system()) {
        self.configuration = configuration
        self.resolver = resolver
    }

    /// Finds the program, follows a `#!` line to its interpreter, resolves the closure and
    /// builds the report. Missing libraries do not fail the inspection: they are in `missing`.
    public func run() throws(InspectError) -> InspectReport {
        try inspect().report
    }

    /// The report and the closure it was built from. The closure keeps every object's file
    /// mapped until it is released (a caller about to exit can skip unmapping them).
    /// `analysis`: the loader-work pipeline, when the caller started it already (its thread sets
    /// up its tables meanwhile).
    public func inspect(analysis: LoaderWorkAnalyzer.Pipeline? = nil) throws(InspectError) -> InspectOutcome {
        let path = try locate(configuration.program)
        var script: InspectReport.Script?
        var programPath = path
        if let line = try ScriptLine.read(path) {
            guard !line.interpreter.isEmpty else {
                throw .badScript(script: path, reason: "#! line names no interpreter")
            }
            script = .init(path: path, interpreter: line.interpreter, interpreterArgument: line.argument)
            programPath = line.interpreter
            if (try? ScriptLine.read(programPath)) ?? nil != nil {
                // The kernel runs nested scripts; launchprof reports the first interpreter only.
                throw .badScript(script: path, reason: "its interpreter \(programPath) is itself a script")
            }
        }
        let image: ELFImage
        do {
            image = try ELFImage.read(path: programPath)
        } catch {
            if script != nil, case .notFound = error {
                throw .scriptInterpreterMissing(script: path, interpreter: programPath)
            }
            throw .file(error)
        }
        if let interpreter = image.interpreter, access(interpreter, F_OK) != 0, errno == ENOENT || errno == ENOTDIR {
            throw .programInterpreterMissing(program: programPath, interpreter: interpreter)
        }
        // The loader work is replayed object by object on a second CPU while the resolver reads on.
        let work = analysis ?? LoaderWorkAnalyzer.Pipeline()
        let closure = resolver.resolve(program: image, environment: configuration.environment) { work.add($0.image) }
        var pendingModel: LaunchCostModel?
        let loaderWork = work.finish(closure) { pendingModel = configuration.pendingCostModel?() }
        let report = InspectReportBuilder(costModel: pendingModel ?? configuration.costModel)
            .report(closure: closure, work: loaderWork, script: script)
        // The PATH entries tried before the program, the program, its interpreter.
        let tried = ProgramLocator.candidates(configuration.program, environment: configuration.environment)
        let programPaths = Array(tried.prefix { $0 != path }) + [path] + (script == nil ? [] : [programPath])
        return InspectOutcome(report: report, closure: closure, programPaths: programPaths, analysis: work)
    }

    /// The path a shell would execute for `name` (see `ProgramLocator.search`).
    func locate(_ name: String) throws(InspectError) -> String {
        guard let path = ProgramLocator.search(name, environment: configuration.environment) else {
            throw .notFoundOnPath(name: name, path: ProgramLocator.searchPath(configuration.environment))
        }
        return path
    }
}

/// What an inspection produced.
public struct InspectOutcome: Sendable {
    public let report: InspectReport
    /// The resolved closure (the ELF images behind `report.objects`, in the same order).
    public let closure: Closure
    /// The PATH entries tried before the program, the program, its interpreter.
    let programPaths: [String]
    /// The loader-work analysis and its tables, freed with the outcome (a caller about to exit
    /// can skip that too).
    let analysis: LoaderWorkAnalyzer.Pipeline

    /// Every path whose presence or contents decided the report (`InspectResultCache`).
    public var consultedPaths: [String] { programPaths + closure.consultedPaths }
}
