import Foundation
import LaunchprofELF
import LaunchprofReport
import LaunchprofTracing

/// `launchprof inspect --dlopen PROGRAM [ARGS…]`: what one real launch of the program loaded at
/// run time (every `dlopen` the runtime probes saw), each load's new objects counted from their
/// ELF files as `inspect` counts the pre-main closure.
///
/// The objects a load brought in are those the loader initialised inside it for the first time
/// in the process (its `dlopen.init` phases, one per new object, constructors or not: the loader
/// runs `call_init` for each); the load's root is the last of them (dependencies first). A load
/// of something already loaded brings nothing new. The counts come from `inspect` of each root's
/// closure, keeping only the objects that load brought in.
///
/// `--json` writes `Result` (docs/formats/schema/inspect-dlopen.schema.json): each object in the
/// shape of `inspect --json`'s objects, the run-time and pre-main totals side by side.
public enum RuntimeLoadInspector {
    public struct Load: Sendable, Encodable {
        /// What the program asked `dlopen` for; nil for `dlopen(NULL)` (the program's own
        /// handle) or a name the kernel could not read.
        public var requested: String?
        /// The object whose code called `dlopen`, where known (`LaunchPhase.caller`).
        public var caller: String?
        /// The thread it ran on, when not the main one.
        public var thread: Int32?
        /// From the spawn.
        public var startNs: UInt64
        public var durationNs: UInt64
        /// The objects it loaded and initialised, counted from their files; paths it brought in
        /// that could not be read stay in `unread`.
        public var objects: [InspectReport.Object]
        public var unread: [String]
    }

    /// What every load brought in, summed as `inspect` sums a closure.
    public struct Totals: Sendable, Equatable, Encodable {
        /// Objects loaded, the unreadable ones included.
        public var objects = 0
        /// Of `objects`, those whose file could not be read for counts.
        public var unread = 0
        public var sizeBytes: UInt64 = 0
        public var relocations = InspectReport.Relocations()
        public var initializers = 0
        public var finalizers = 0
        public var importedSymbols = 0
        public var exportedSymbols = 0

        init(_ loads: [Load]) {
            for load in loads {
                objects += load.objects.count + load.unread.count
                unread += load.unread.count
                for object in load.objects {
                    sizeBytes += object.sizeBytes
                    relocations = relocations + object.relocations
                    initializers += object.initializers.total
                    finalizers += object.finalizers.total
                    importedSymbols += object.symbols.imported
                    exportedSymbols += object.symbols.exported
                }
            }
        }
    }

    public struct Result: Sendable, Encodable {
        /// The document's format version (`inspect-dlopen.schema.json`).
        public var schemaVersion = InspectReport.runtimeLoadsSchemaVersion
        public var program: String
        public var loads: [Load]
        /// The loads' objects summed.
        public var runTime: Totals
        /// The pre-main closure's totals, for comparison.
        public var closure: InspectReport.Totals
        /// Why run-time loads could not be seen in this launch (the phases' absence reasons).
        public var unobserved: [AbsentPhase]

        init(program: String, loads: [Load], closure: InspectReport.Totals, unobserved: [AbsentPhase]) {
            self.program = program
            self.loads = loads
            runTime = Totals(loads)
            self.closure = closure
            self.unobserved = unobserved
        }

        /// The `--json` document: pretty, keys sorted, as `inspect --json` writes.
        public func jsonBytes() throws -> [UInt8] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            return Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
        }
    }

    /// Launches `program` once (readiness as `run`'s default, its output discarded) and counts
    /// what it loaded at run time; nil when the launch gave no run. `costModel`: what prices the
    /// pre-main closure's estimate (`inspect`'s stored calibration, as `inspect` uses it). Throws
    /// `RunError` or `InspectError`.
    public static func inspect(
        program: String, arguments: [String], environment: [String: String], costModel: LaunchCostModel = .standard
    ) throws -> Result? {
        var configuration = RunConfiguration(program: program, arguments: arguments)
        configuration.runs = 1
        configuration.inheritedEnvironment = environment
        configuration.observer = .uprobe
        let session = try RunSession(configuration: configuration)
        guard let run = try LaunchPipeline(session, sinks: []).run()[0].get().lastRun else { return nil }
        let closure = Set(session.closurePaths.map(realPath))
        var inspection = InspectConfiguration(program: program, environment: environment)
        inspection.costModel = costModel
        let premain = try InspectSession(configuration: inspection).run()
        var loads: [Load] = []
        var counted: Set<String> = closure
        let initialised = run.phases.filter { $0.name == LaunchPhase.dlopenInit }
        for call in run.phases where call.name == LaunchPhase.dlopen {
            // Its own objects: initialised inside it on its thread, not inside a nested call.
            let nested = run.phases.filter {
                $0.name == LaunchPhase.dlopen && $0.thread == call.thread && $0 != call
                    && $0.startNs >= call.startNs && $0.endNs <= call.endNs
            }
            let paths = initialised.filter { object in
                object.thread == call.thread && object.startNs >= call.startNs && object.endNs <= call.endNs
                    && !nested.contains { object.startNs >= $0.startNs && object.endNs <= $0.endNs }
            }.compactMap(\.object).map(realPath).filter { !counted.contains($0) }
            var load = Load(
                requested: call.object, caller: call.caller, thread: call.thread, startNs: call.startNs, durationNs: call.durationNs,
                objects: [], unread: [])
            if let root = paths.last {
                let report = try? InspectSession(configuration: .init(program: root, environment: environment)).run()
                let byPath = Dictionary((report?.objects ?? []).map { (realPath($0.path), $0) }, uniquingKeysWith: { first, _ in first })
                for path in paths {
                    if let object = byPath[path] { load.objects.append(object) } else { load.unread.append(path) }
                }
                counted.formUnion(paths)
            }
            loads.append(load)
        }
        let unobserved = run.absent.filter { $0.phase.hasPrefix(LaunchPhase.dlopen) }
        return Result(program: session.program.path, loads: loads, closure: premain.totals, unobserved: unobserved)
    }

    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
