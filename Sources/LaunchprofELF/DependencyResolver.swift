#if canImport(Glibc)
import Glibc
#endif

/// Resolves a program's DT_NEEDED closure as glibc 2.36's `ld.so` does, from files alone:
/// breadth-first; DT_RPATH (of the requesting object, then of its loaders, ignored when the
/// object has DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH (the requesting object's only),
/// /etc/ld.so.cache, the default directories; glibc-hwcaps and legacy hwcap subdirectories
/// (tls/, haswell/, x86_64/, …) of each directory; `$ORIGIN`, `$LIB`, `$PLATFORM`; one object
/// per name, soname or file.
///
/// Not modelled: legacy-hwcap entries of ld.so.cache (ldconfig records them only for libraries
/// installed in such subdirectories of trusted directories), secure-mode (setuid) restrictions,
/// /etc/ld.so.preload, DT_AUXILIARY/DT_FILTER, the `glibc.cpu.hwcaps`/`hwcap_mask` tunables.
public struct DependencyResolver: Sendable {
    /// The loader's cache; `system()`'s is read when the first library is looked up, after the
    /// program has gone to `onEntry` (`inspect` scans the program on another CPU meanwhile).
    public var cache: LoaderCache? { inputs.loaderCache }
    /// The file `cache` was read from (or would have been, when absent): it decides lookups.
    public var cachePath: String?
    /// This machine's capabilities; read on first use (reading /proc/cpuinfo costs more than
    /// resolving a small closure from the cache, which rarely needs them).
    public var host: HostCapabilities { inputs.hostCapabilities }
    private let inputs: ResolverInputs
    /// The loader's built-in directories (Debian 12, x86-64).
    public var defaultDirectories = [
        "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib",
    ]

    public init(cache: LoaderCache?, host: HostCapabilities) {
        inputs = ResolverInputs(cache: cache, host: host)
    }

    /// A resolver that reads this machine's capabilities only when a lookup needs them.
    public init(cache: LoaderCache?) {
        inputs = ResolverInputs(cache: cache, host: nil)
    }

    private init(inputs: ResolverInputs) {
        self.inputs = inputs
    }

    /// A resolver for this machine: /etc/ld.so.cache (none when absent or unreadable, as the
    /// loader then searches directories only) and this CPU's capabilities.
    public static func system() -> DependencyResolver {
        var resolver = DependencyResolver(inputs: ResolverInputs(readingCache: LoaderCache.defaultPath))
        resolver.cachePath = LoaderCache.defaultPath
        return resolver
    }

    /// The closure of `program`. Libraries that cannot be found or read are listed in
    /// `missing`; the rest is still resolved. `onEntry` is called with each object as it joins
    /// the closure, in load order (the program first), for work that can start before the
    /// closure is complete.
    public func resolve(
        program: ELFImage, environment: [String: String], onEntry: ((Closure.Entry) -> Void)? = nil
    ) -> Closure {
        var state = ResolutionState(resolver: self, environment: environment, onEntry: onEntry)
        state.run(program)
        var consulted = state.consulted.paths
        if let cachePath { consulted.append(cachePath) }
        return Closure(entries: state.entries, missing: state.missingList(), consultedPaths: consulted)
    }
}

/// The resolver's working state for one program.
private struct ResolutionState {
    let resolver: DependencyResolver
    let libraryPath: [String]?
    let preload: [String]
    var entries: [Closure.Entry] = []
    /// Names (opened paths, DT_NEEDED names, sonames) already bound to an entry.
    var names: [String: Int] = [:]
    /// The interpreter, read up front and linked in where first needed.
    var interpreter: Closure.Entry?
    var missing: [(name: String, neededBy: [Int], reason: String)] = []
    let realPaths = RealPathCache()
    let consulted = ConsultedPaths()
    var missingIndex: [String: Int] = [:]
    let onEntry: ((Closure.Entry) -> Void)?

    init(resolver: DependencyResolver, environment: [String: String], onEntry: ((Closure.Entry) -> Void)?) {
        self.resolver = resolver
        self.onEntry = onEntry
        self.libraryPath = environment["LD_LIBRARY_PATH"].map {
            $0.split(separator: ":", omittingEmptySubsequences: false).flatMap {
                $0.split(separator: ";", omittingEmptySubsequences: false)
            }.map(String.init)
        }
        self.preload = (environment["LD_PRELOAD"] ?? "").split(whereSeparator: { $0 == " " || $0 == ":" })
            .map(String.init)
    }

    mutating func run(_ program: ELFImage) {
        add(.init(image: program, loadedAs: program.openedPath, source: .program, neededBy: [], dependencies: []))
        guard program.isDynamic || program.interpreter != nil else { return }
        if let path = program.interpreter {
            consulted.paths.append(path)
            switch Result(catching: { () throws(ELFError) in try ELFImage.read(path: path, realPaths: realPaths) }) {
            case .success(let image):
                interpreter = .init(image: image, loadedAs: path, source: .interpreter, neededBy: [], dependencies: [])
            case .failure(let error):
                recordMissing(path, by: 0, reason: reason(error))
            }
        }
        for name in preload {
            _ = load(name, by: 0, preloading: true)
        }
        var next = 0
        while next < entries.count {
            for name in entries[next].image.dynamic.needed {
                if let index = load(name, by: next) {
                    entries[next].dependencies.append(index)
                }
            }
            next += 1
        }
        if let interpreter {
            add(interpreter)
        }
    }

    private mutating func add(_ entry: Closure.Entry) {
        let index = entries.count
        entries.append(entry)
        names[entry.loadedAs] = names[entry.loadedAs] ?? index
        if let soname = entry.image.dynamic.soname { names[soname] = names[soname] ?? index }
        onEntry?(entry)
    }

    /// Binds `name`, needed by entry `requester`, to a loaded or newly loaded object.
    private mutating func load(_ name: String, by requester: Int, preloading: Bool = false) -> Int? {
        if let index = names[name] {
            noteNeeded(index, by: requester, preloading: preloading)
            return index
        }
        if let interpreter, name == interpreter.loadedAs || name == interpreter.image.dynamic.soname
            || (!name.contains("/") && name == baseName(interpreter.loadedAs))
        {
            var entry = interpreter
            self.interpreter = nil
            if !preloading { entry.neededBy = [requester] }
            add(entry)
            return entries.count - 1
        }
        switch find(name, requester: requester) {
        case .found(let image, let path, let source):
            // Another path to a file already loaded (a linear scan: closures are small).
            if let index = entries.firstIndex(where: { $0.image.fileID == image.fileID }) {
                names[name] = index
                noteNeeded(index, by: requester, preloading: preloading)
                return index
            }
            if let interpreter, interpreter.image.fileID == image.fileID {
                var entry = interpreter
                self.interpreter = nil
                if !preloading { entry.neededBy = [requester] }
                add(entry)
                names[name] = entries.count - 1
                return entries.count - 1
            }
            add(.init(image: image, loadedAs: path, source: preloading ? .preload : source,
                      neededBy: preloading ? [] : [requester], dependencies: []))
            names[name] = entries.count - 1
            return entries.count - 1
        case .missing(let reason):
            recordMissing(name, by: requester, reason: reason)
            return nil
        }
    }

    private mutating func noteNeeded(_ index: Int, by requester: Int, preloading: Bool) {
        if !preloading, !entries[index].neededBy.contains(requester), index != requester {
            entries[index].neededBy.append(requester)
        }
    }

    private mutating func recordMissing(_ name: String, by requester: Int, reason: String) {
        if let index = missingIndex[name] {
            if !missing[index].neededBy.contains(requester) { missing[index].neededBy.append(requester) }
        } else {
            missingIndex[name] = missing.count
            missing.append((name, [requester], reason))
        }
    }

    func missingList() -> [Closure.Missing] {
        missing.map { item in
            Closure.Missing(
                name: item.name, neededBy: item.neededBy.map { entries[$0].image.path }, reason: item.reason)
        }
    }

    private enum Lookup {
        case found(ELFImage, path: String, source: Closure.Source)
        case missing(reason: String)
    }

    /// What one candidate path gives: an image, nothing (keep searching), or a fatal error.
    private enum Attempt {
        case image(ELFImage)
        case absent
        case failed(String)
    }

    private func attempt(_ path: String) -> Attempt {
        consulted.paths.append(path)
        do {
            return .image(try ELFImage.read(path: path, realPaths: realPaths))
        } catch {
            switch error {
            // The loader keeps searching past missing files and files of another class or machine.
            case .notFound, .isDirectory, .notAFile, .unsupportedClass, .unsupportedMachine: return .absent
            default: return .failed(reason(error))
            }
        }
    }

    private func reason(_ error: ELFError) -> String {
        switch error {
        case .notFound: return "not found"
        default: return error.description
        }
    }

    /// The loader's search for `name`, requested by entry `requester`.
    private func find(_ name: String, requester: Int) -> Lookup {
        let loader = entries[requester]
        if name.contains("/") {
            let path = expand(name, for: requester)
            switch attempt(path) {
            case .image(let image): return .found(image, path: path, source: .path)
            case .absent: return .missing(reason: "not found")
            case .failed(let reason): return .missing(reason: reason)
            }
        }
        // DT_RPATH of the requester and then of each object that loaded it, unless the
        // requester has DT_RUNPATH.
        if loader.image.dynamic.runpath == nil {
            // Loaders have smaller indices than what they load, so the chain ends at the program.
            var current: Int? = requester
            var visitedProgram = false
            while let index = current {
                if let rpath = entries[index].image.dynamic.effectiveRPath,
                    let found = search(name, in: directories(rpath, for: index), source: .rpath)
                {
                    return found
                }
                visitedProgram = visitedProgram || index == 0
                current = index == 0 ? nil : entries[index].neededBy.first
            }
            if !visitedProgram, let rpath = entries[0].image.dynamic.effectiveRPath,
                let found = search(name, in: directories(rpath, for: 0), source: .rpath)
            {
                return found
            }
        }
        if let libraryPath {
            let expanded = libraryPath.map { expand($0.isEmpty ? "." : $0, for: 0) }
            if let found = search(name, in: expanded, source: .libraryPath) { return found }
        }
        if let runpath = loader.image.dynamic.runpath,
            let found = search(name, in: directories(runpath, for: requester), source: .runpath)
        {
            return found
        }
        if !loader.image.dynamic.noDefaultLibraries {
            if let cache = resolver.cache, let path = cache.lookup(name, hwcaps: { resolver.host.hwcapsSubdirectories }) {
                switch attempt(path) {
                case .image(let image): return .found(image, path: path, source: .cache)
                case .absent: break
                case .failed(let reason): return .missing(reason: reason)
                }
            }
            if let found = search(name, in: resolver.defaultDirectories, source: .defaultDirectory) {
                return found
            }
        }
        return .missing(reason: "not found")
    }

    /// Tries `name` in each directory: its glibc-hwcaps subdirectories, then its legacy hwcap
    /// subdirectories, then the directory itself.
    private func search(_ name: String, in directories: [String], source: Closure.Source) -> Lookup? {
        for directory in directories {
            let host = resolver.host
            var candidates = host.hwcapsSubdirectories.map { "\(directory)/glibc-hwcaps/\($0)/\(name)" }
            candidates += host.legacySubdirectories.map { "\(directory)/\($0)/\(name)" }
            candidates.append(directory.hasSuffix("/") ? directory + name : "\(directory)/\(name)")
            for path in candidates {
                switch attempt(path) {
                case .image(let image): return .found(image, path: path, source: source)
                case .absent: continue
                case .failed(let reason): return .missing(reason: reason)
                }
            }
        }
        return nil
    }

    /// The directories of a DT_RPATH/DT_RUNPATH value, dynamic string tokens expanded.
    private func directories(_ value: String, for index: Int) -> [String] {
        value.split(separator: ":", omittingEmptySubsequences: false).map {
            expand($0.isEmpty ? "." : String($0), for: index)
        }
    }

    /// Expands `$ORIGIN`, `$LIB` and `$PLATFORM` (bare or in braces) for entry `index`.
    private func expand(_ text: String, for index: Int) -> String {
        guard text.contains("$") else { return text }
        let tokens: [(String, () -> String)] = [
            ("ORIGIN", { origin(of: index) }), ("LIB", { resolver.host.libDirectory }),
            ("PLATFORM", { resolver.host.platform }),
        ]
        var result = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            var matched = false
            for (token, value) in tokens {
                if rest.hasPrefix("{\(token)}") {
                    result += value()
                    rest = rest.dropFirst(token.count + 2)
                    matched = true
                } else if rest.hasPrefix(token) {
                    let after = rest.dropFirst(token.count)
                    if after.first.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true {
                        result += value()
                        rest = after
                        matched = true
                    }
                }
                if matched { break }
            }
            if !matched { result += "$" }
        }
        return result + rest
    }

    /// `$ORIGIN`: the directory of the object. For the program the loader uses its real path
    /// (/proc/self/exe); for libraries the path it opened, made absolute.
    private func origin(of index: Int) -> String {
        let entry = entries[index]
        var path = index == 0 ? entry.image.path : entry.loadedAs
        if !path.hasPrefix("/") {
            path = currentDirectory() + "/" + path
        }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    private func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "." }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    private func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// The paths a resolution tried (a class: the lookups that record them are non-mutating).
private final class ConsultedPaths {
    var paths: [String] = []
}

/// The loader cache and this machine's capabilities, each read once, on first use, by whichever
/// thread asks first. A pthread mutex rather than `Mutex`: a `Mutex` of these types is a generic
/// instantiation the Swift runtime makes at first use, ~50 µs at every start of `inspect`.
private final class ResolverInputs: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var cache: LoaderCache?
    /// The cache file still to read, if any.
    private var cachePath: String?
    private var host: HostCapabilities?

    init(cache: LoaderCache?, host: HostCapabilities?) {
        pthread_mutex_init(lock, nil)
        self.cache = cache
        self.host = host
    }

    /// Inputs whose loader cache is read from `path` when first asked for (none when it cannot be).
    init(readingCache path: String) {
        pthread_mutex_init(lock, nil)
        cachePath = path
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    var loaderCache: LoaderCache? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let path = cachePath {
            cache = try? LoaderCache.load(path: path)
            cachePath = nil
        }
        return cache
    }

    var hostCapabilities: HostCapabilities {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let host { return host }
        let current = HostCapabilities.current()
        host = current
        return current
    }
}
