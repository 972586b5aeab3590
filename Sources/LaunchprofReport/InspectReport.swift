/// What `launchprof inspect` found, from the ELF files alone: the program, its dependency
/// closure in load order, what each object asks of the loader, totals and advice.
///
/// This is a public, versioned contract (`schemaVersion`): keys are sorted, counts are
/// integers, sizes carry `Bytes` and times `Ns` in their names. Arrays keep a deterministic
/// order (objects in load order, advice in a fixed order).
public struct InspectReport: Codable, Sendable, Equatable {
    /// Bump when a key changes meaning or disappears; adding keys keeps the version.
    /// 2: the cost model's coefficients are the calibrated terms in picoseconds, objects and
    /// totals carry `loaderWork`.
    public static let currentSchemaVersion = 2
    /// The version of `inspect --dlopen --json`'s document (inspect-dlopen.schema.json), whose
    /// objects are this report's `Object`s.
    public static let runtimeLoadsSchemaVersion = 1

    public var schemaVersion: Int
    /// Set when the argument was a `#!` script: the program inspected is its interpreter.
    public var script: Script?
    public var program: Program
    /// Every object the loader maps, in its load order (the program first).
    public var objects: [Object]
    /// Libraries the loader would not find or could not load.
    public var missing: [Missing]
    /// Paths of objects with initializers, in the order they run (the program's last).
    public var initializerOrder: [String]
    public var totals: Totals
    public var advice: [Advice]
    /// The coefficients the estimates use.
    public var costModel: LaunchCostModel

    public init(
        schemaVersion: Int = InspectReport.currentSchemaVersion, script: Script?, program: Program,
        objects: [Object], missing: [Missing], initializerOrder: [String], totals: Totals, advice: [Advice],
        costModel: LaunchCostModel
    ) {
        self.schemaVersion = schemaVersion
        self.script = script
        self.program = program
        self.objects = objects
        self.missing = missing
        self.initializerOrder = initializerOrder
        self.totals = totals
        self.advice = advice
        self.costModel = costModel
    }

    public struct Script: Codable, Sendable, Equatable {
        public var path: String
        /// The interpreter named on the `#!` line (as written).
        public var interpreter: String
        public var interpreterArgument: String?

        public init(path: String, interpreter: String, interpreterArgument: String?) {
            self.path = path
            self.interpreter = interpreter
            self.interpreterArgument = interpreterArgument
        }
    }

    public struct Program: Codable, Sendable, Equatable {
        /// The resolved path (symlinks followed).
        public var path: String
        /// executable, pie, static, static-pie or shared-object.
        public var type: String
        public var elfClass: String
        public var machine: String
        public var interpreter: String?
        public var buildID: String?
        public var stripped: Bool
        /// "now" or "lazy".
        public var binding: String
        /// "gnu", "sysv" (both when both are present); empty for a static program.
        public var hashStyles: [String]
        public var tlsSizeBytes: UInt64
        /// Whether the dynamic loader runs before the program (false for static programs).
        public var usesLoader: Bool

        public init(
            path: String, type: String, elfClass: String, machine: String, interpreter: String?,
            buildID: String?, stripped: Bool, binding: String, hashStyles: [String], tlsSizeBytes: UInt64,
            usesLoader: Bool
        ) {
            self.path = path
            self.type = type
            self.elfClass = elfClass
            self.machine = machine
            self.interpreter = interpreter
            self.buildID = buildID
            self.stripped = stripped
            self.binding = binding
            self.hashStyles = hashStyles
            self.tlsSizeBytes = tlsSizeBytes
            self.usesLoader = usesLoader
        }
    }

    public struct Relocations: Codable, Sendable, Equatable {
        /// R_X86_64_RELATIVE entries plus DT_RELR-encoded addresses.
        public var relative: Int
        /// Of `relative`, those encoded in DT_RELR.
        public var relativeRELR: Int
        /// GLOB_DAT and 64-bit absolute: one symbol lookup each.
        public var symbolic: Int
        public var jumpSlot: Int
        public var tls: Int
        public var copy: Int
        public var irelative: Int
        public var other: Int
        public var total: Int

        public init(
            relative: Int = 0, relativeRELR: Int = 0, symbolic: Int = 0, jumpSlot: Int = 0, tls: Int = 0,
            copy: Int = 0, irelative: Int = 0, other: Int = 0
        ) {
            self.relative = relative
            self.relativeRELR = relativeRELR
            self.symbolic = symbolic
            self.jumpSlot = jumpSlot
            self.tls = tls
            self.copy = copy
            self.irelative = irelative
            self.other = other
            self.total = relative + symbolic + jumpSlot + tls + copy + irelative + other
        }

        public static func + (lhs: Relocations, rhs: Relocations) -> Relocations {
            Relocations(
                relative: lhs.relative + rhs.relative, relativeRELR: lhs.relativeRELR + rhs.relativeRELR,
                symbolic: lhs.symbolic + rhs.symbolic, jumpSlot: lhs.jumpSlot + rhs.jumpSlot,
                tls: lhs.tls + rhs.tls, copy: lhs.copy + rhs.copy, irelative: lhs.irelative + rhs.irelative,
                other: lhs.other + rhs.other)
        }
    }

    public struct Initializers: Codable, Sendable, Equatable {
        /// 1 when DT_INIT is present.
        public var initFunction: Int
        public var initArray: Int
        public var preinitArray: Int
        public var total: Int

        public init(initFunction: Int, initArray: Int, preinitArray: Int) {
            self.initFunction = initFunction
            self.initArray = initArray
            self.preinitArray = preinitArray
            self.total = initFunction + initArray + preinitArray
        }
    }

    public struct Finalizers: Codable, Sendable, Equatable {
        /// 1 when DT_FINI is present.
        public var finiFunction: Int
        public var finiArray: Int
        public var total: Int

        public init(finiFunction: Int, finiArray: Int) {
            self.finiFunction = finiFunction
            self.finiArray = finiArray
            self.total = finiFunction + finiArray
        }
    }

    public struct Symbols: Codable, Sendable, Equatable {
        public var imported: Int
        public var exported: Int

        public init(imported: Int, exported: Int) {
            self.imported = imported
            self.exported = exported
        }
    }

    public struct Object: Codable, Sendable, Equatable {
        /// The resolved path (symlinks followed).
        public var path: String
        /// The path the loader opens (what `ldd` prints).
        public var loadedAs: String
        /// How it was found: program, interpreter, preload, path, rpath, ld-library-path,
        /// runpath, cache, default-directory.
        public var foundVia: String
        public var type: String
        public var soname: String?
        public var buildID: String?
        public var sizeBytes: UInt64
        /// DT_NEEDED names, in order.
        public var needed: [String]
        /// Paths of the objects whose DT_NEEDED named this one.
        public var neededBy: [String]
        public var rpath: String?
        public var runpath: String?
        public var binding: String
        public var hashStyles: [String]
        public var tlsSizeBytes: UInt64
        public var relocations: Relocations
        public var initializers: Initializers
        public var finalizers: Finalizers
        public var symbols: Symbols
        /// What the loader does for this object (segments, lookups and their scope depth, pages).
        public var loaderWork: LoaderWork

        public init(
            path: String, loadedAs: String, foundVia: String, type: String, soname: String?, buildID: String?,
            sizeBytes: UInt64, needed: [String], neededBy: [String], rpath: String?, runpath: String?,
            binding: String, hashStyles: [String], tlsSizeBytes: UInt64, relocations: Relocations,
            initializers: Initializers, finalizers: Finalizers, symbols: Symbols, loaderWork: LoaderWork = LoaderWork()
        ) {
            self.loaderWork = loaderWork
            self.path = path
            self.loadedAs = loadedAs
            self.foundVia = foundVia
            self.type = type
            self.soname = soname
            self.buildID = buildID
            self.sizeBytes = sizeBytes
            self.needed = needed
            self.neededBy = neededBy
            self.rpath = rpath
            self.runpath = runpath
            self.binding = binding
            self.hashStyles = hashStyles
            self.tlsSizeBytes = tlsSizeBytes
            self.relocations = relocations
            self.initializers = initializers
            self.finalizers = finalizers
            self.symbols = symbols
        }
    }

    public struct Missing: Codable, Sendable, Equatable {
        public var name: String
        /// Paths of the objects that need it.
        public var neededBy: [String]
        public var reason: String

        public init(name: String, neededBy: [String], reason: String) {
            self.name = name
            self.neededBy = neededBy
            self.reason = reason
        }
    }

    public struct Totals: Codable, Sendable, Equatable {
        /// Objects the loader maps, the program included.
        public var objects: Int
        public var missing: Int
        public var sizeBytes: UInt64
        public var relocations: Relocations
        public var initializers: Int
        public var finalizers: Int
        public var importedSymbols: Int
        public var exportedSymbols: Int
        /// The cost model's estimate of the loader's work before `main` (0 without a loader).
        public var estimatedLoaderNs: Int
        /// The objects' `loaderWork` summed: what the estimate prices.
        public var loaderWork: LoaderWork

        public init(
            objects: Int, missing: Int, sizeBytes: UInt64, relocations: Relocations, initializers: Int,
            finalizers: Int, importedSymbols: Int, exportedSymbols: Int, estimatedLoaderNs: Int,
            loaderWork: LoaderWork = LoaderWork()
        ) {
            self.loaderWork = loaderWork
            self.objects = objects
            self.missing = missing
            self.sizeBytes = sizeBytes
            self.relocations = relocations
            self.initializers = initializers
            self.finalizers = finalizers
            self.importedSymbols = importedSymbols
            self.exportedSymbols = exportedSymbols
            self.estimatedLoaderNs = estimatedLoaderNs
        }
    }

    /// One piece of advice, tied to the numbers that triggered it.
    public struct Advice: Codable, Sendable, Equatable {
        /// Stable identifier: many-objects, no-relr, no-gnu-hash, bind-now, many-initializers,
        /// symbol-lookups, swift-runtime.
        public var kind: String
        public var message: String
        /// The objects it is about (paths), largest contribution first.
        public var objects: [String]
        /// The number that triggered it (objects, relocations, initializers…).
        public var count: Int
        /// The cost model's price of one unit of `count`.
        public var costPerUnitNs: Int
        public var estimatedNs: Int

        public init(kind: String, message: String, objects: [String], count: Int, costPerUnitNs: Int) {
            self.init(
                kind: kind, message: message, objects: objects, count: count, costPerUnitNs: costPerUnitNs,
                estimatedNs: count * costPerUnitNs)
        }

        /// Advice whose estimate is not `count` × a unit price (a lookup costs by its scope depth).
        public init(kind: String, message: String, objects: [String], count: Int, costPerUnitNs: Int, estimatedNs: Int) {
            self.kind = kind
            self.message = message
            self.objects = objects
            self.count = count
            self.costPerUnitNs = costPerUnitNs
            self.estimatedNs = estimatedNs
        }
    }
}
